// The one translation unit that includes <torch/script.h>.
#include "trainer/model/target_file.h"

#include <torch/script.h>

#include <fmt/format.h>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/util/errors.h"

namespace racelab::trainer {
namespace {

class TorchScriptTarget : public Target {
 public:
  TorchScriptTarget(torch::jit::Module module, const std::string& path) : module_(std::move(module)) {
    try {
      config_.vocab_size = module_.attr("vocab_size").toInt();
      config_.d_model = module_.attr("d_model").toInt();
      config_.max_len = module_.attr("max_len").toInt();
      config_.layers = module_.attr("layers").toInt();
      config_.heads = module_.hasattr("heads") ? module_.attr("heads").toInt() : 1;
      module_.get_method("embed");
      module_.get_method("head");
    } catch (const std::exception& e) {
      throw BadInput(fmt::format("TorchScript target '{}': missing part of the target contract "
                                 "(int attributes vocab_size, d_model, max_len, layers; methods forward, embed, head): {}",
                                 path, e.what()));
    }
    config_.tap_layers = config_.taps();
    module_.eval();
    for (auto p : module_.parameters()) p.requires_grad_(false);
  }
  const TargetConfig& config() const override { return config_; }
  std::string kind() const override { return "torchscript"; }
  TargetOutput forward(const at::Tensor& tokens) override {
    auto out = module_.forward({tokens}).toTuple();
    auto hidden = out->elements().at(1).toTensorList();
    std::vector<at::Tensor> tapped;
    for (auto t : config_.tap_layers) tapped.push_back(hidden.get(static_cast<size_t>(t)));
    return {out->elements().at(0).toTensor(), at::cat(tapped, -1)};
  }
  at::Tensor embed(const at::Tensor& tokens) override { return module_.get_method("embed")({tokens}).toTensor(); }
  at::Tensor head(const at::Tensor& h) override { return module_.get_method("head")({h}).toTensor(); }
  c10::Device device() const override { return device_; }
  void to(c10::Device device) override {
    module_.to(device);
    device_ = device;
  }
  torch::jit::Module& module() { return module_; }

 private:
  torch::jit::Module module_;
  TargetConfig config_;
  c10::Device device_{at::kCPU};  // load_target loads onto the CPU; to() moves it
};

uint64_t fnv_tensor(uint64_t h, const at::Tensor& t) {
  auto c = t.detach().cpu().contiguous();
  auto* p = static_cast<const uint8_t*>(c.data_ptr());
  for (int64_t i = 0; i < c.numel() * static_cast<int64_t>(c.element_size()); ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

std::string ts_name(const std::string& n) {
  std::string s = n;
  for (auto& c : s)
    if (c == '.') c = '_';
  return s;
}

}  // namespace

void save_target(const NativeTarget& target, const std::string& path, const nlohmann::json& extra) {
  std::map<std::string, at::Tensor> tensors;
  for (auto& [name, t] : target.params().items()) tensors[name] = t;
  checkpoint::File f;
  f.meta = extra;
  f.meta["kind"] = "target";
  f.meta["config"] = target.config().to_json();
  f.payload = checkpoint::save_tensors(tensors);
  checkpoint::write(path, f);
}

std::shared_ptr<Target> load_target(const std::string& path, nlohmann::json* meta) {
  if (checkpoint::has_magic(path)) {
    auto f = checkpoint::read(path, "target");
    TargetConfig cfg;
    try {
      cfg = TargetConfig::from_json(f.meta.at("config"));
      cfg.validate();
    } catch (const std::exception& e) {
      throw BadInput(fmt::format("checkpoint '{}': bad target config: {}", path, e.what()));
    }
    auto t = std::make_shared<NativeTarget>(cfg, 0);
    t->params().load(checkpoint::load_tensors(f.payload, fmt::format("checkpoint '{}'", path)),
                     fmt::format("checkpoint '{}'", path));
    t->params().freeze();
    if (meta != nullptr) *meta = f.meta;
    return t;
  }
  torch::jit::Module m;
  try {
    m = torch::jit::load(path, c10::Device(at::kCPU));
  } catch (const std::exception& e) {
    throw BadInput(fmt::format("target '{}': neither a racelab checkpoint nor a loadable TorchScript file: {}", path,
                               std::string(e.what()).substr(0, 300)));
  }
  if (meta != nullptr) *meta = {{"kind", "torchscript"}, {"path", path}};
  return std::make_shared<TorchScriptTarget>(std::move(m), path);
}

uint64_t target_fingerprint(Target& target) {
  uint64_t h = 1469598103934665603ULL;
  if (auto* n = dynamic_cast<NativeTarget*>(&target)) {
    for (auto& [name, t] : n->params().items()) h = fnv_tensor(h, t);
  } else if (auto* ts = dynamic_cast<TorchScriptTarget*>(&target)) {
    for (auto p : ts->module().parameters()) h = fnv_tensor(h, p);
  }
  return h;
}

void export_torchscript(const NativeTarget& target, const std::string& path) {
  const auto& c = target.config();
  torch::jit::Module m("RacelabTarget");
  for (auto& [name, t] : target.params().items()) m.register_parameter(ts_name(name), t.detach().cpu().clone(), false);
  m.register_attribute("vocab_size", c10::IntType::get(), c.vocab_size);
  m.register_attribute("d_model", c10::IntType::get(), c.d_model);
  m.register_attribute("max_len", c10::IntType::get(), c.max_len);
  m.register_attribute("layers", c10::IntType::get(), c.layers);
  m.register_attribute("heads", c10::IntType::get(), c.heads);
  std::string src = R"(
def embed(self, tokens: Tensor) -> Tensor:
    return torch.embedding(self.tok_emb, tokens)
def head(self, h: Tensor) -> Tensor:
    return torch.linear(h, self.head_w)
def block(self, x: Tensor, mask: Tensor, ln1_w: Tensor, ln1_b: Tensor, qkv_w: Tensor, qkv_b: Tensor,
          out_w: Tensor, out_b: Tensor, ln2_w: Tensor, ln2_b: Tensor, fc_w: Tensor, fc_b: Tensor,
          proj_w: Tensor, proj_b: Tensor) -> Tensor:
    B = x.size(0)
    T = x.size(1)
    d = x.size(2)
    H = self.heads
    h = torch.layer_norm(x, [d], ln1_w, ln1_b, 1e-5)
    qkv = torch.linear(h, qkv_w, qkv_b).chunk(3, -1)
    q = qkv[0].view([B, T, H, d // H]).transpose(1, 2)
    k = qkv[1].view([B, T, H, d // H]).transpose(1, 2)
    v = qkv[2].view([B, T, H, d // H]).transpose(1, 2)
    s = torch.matmul(q, k.transpose(-2, -1)) / ((d // H) ** 0.5)
    s = s.masked_fill(mask.logical_not(), -1e9)
    a = torch.matmul(torch.softmax(s, -1), v).transpose(1, 2).contiguous().view([B, T, d])
    x = x + torch.linear(a, out_w, out_b)
    h = torch.layer_norm(x, [d], ln2_w, ln2_b, 1e-5)
    x = x + torch.linear(torch.gelu(torch.linear(h, fc_w, fc_b)), proj_w, proj_b)
    return x
def forward(self, tokens: Tensor) -> Tuple[Tensor, List[Tensor]]:
    T = tokens.size(1)
    x = self.embed(tokens) + self.pos_emb[0:T]
    mask = torch.ones([T, T]).tril() > 0.5
    hidden: List[Tensor] = []
)";
  for (int64_t l = 0; l < c.layers; ++l) {
    auto p = fmt::format("self.layer{}_", l);
    src += fmt::format(
        "    x = self.block(x, mask, {0}ln1_w, {0}ln1_b, {0}qkv_w, {0}qkv_b, {0}out_w, {0}out_b, {0}ln2_w, {0}ln2_b, "
        "{0}fc_w, {0}fc_b, {0}proj_w, {0}proj_b)\n    hidden.append(x)\n",
        p);
  }
  src += "    d = x.size(2)\n    return self.head(torch.layer_norm(x, [d], self.lnf_w, self.lnf_b, 1e-5)), hidden\n";
  m.define(src);
  auto tmp = path + ".tmp";
  m.save(tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

}  // namespace racelab::trainer
