#include "preload/symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "preload/control.h"

namespace racelab::preload {

namespace {

struct Symbol {
  uintptr_t start;  // as linked (a PIE or a library: relative to its load base)
  uintptr_t size;
  const char* name;  // into the mapped file
  bool code;
};

// One object's .symtab, sorted by start; the file stays mapped.
struct SymbolTable {
  std::vector<Symbol> symbols;
  bool relative = true;  // ET_DYN: addresses are offsets from the load base
};

SymbolTable load(const char* path) {
  SymbolTable t;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return t;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    ::close(fd);
    return t;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return t;
  const auto* base = static_cast<const unsigned char*>(map);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  auto in_file = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      !in_file(eh->e_shoff, static_cast<uint64_t>(eh->e_shnum) * sizeof(Elf64_Shdr))) {
    ::munmap(map, size);
    return t;
  }
  t.relative = eh->e_type == ET_DYN;
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strs = sh[sh[i].sh_link];
    if (!in_file(sh[i].sh_offset, sh[i].sh_size) || !in_file(strs.sh_offset, strs.sh_size)) continue;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
    const size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
    const char* names = reinterpret_cast<const char*>(base + strs.sh_offset);
    for (size_t k = 0; k < n; ++k) {
      const int type = ELF64_ST_TYPE(syms[k].st_info);
      if ((type != STT_FUNC && type != STT_OBJECT) || syms[k].st_value == 0 || syms[k].st_name >= strs.sh_size)
        continue;
      t.symbols.push_back({syms[k].st_value, syms[k].st_size, names + syms[k].st_name, type == STT_FUNC});
    }
  }
  std::sort(t.symbols.begin(), t.symbols.end(), [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  return t;
}

// A C++ name as people write it ("ns::f(int)"), a C name as it is.
std::string demangled(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string s = out;
  std::free(out);
  return s;
}

std::mutex g_mu;
std::map<std::string, SymbolTable>& tables() {
  static auto* m = new std::map<std::string, SymbolTable>;  // never destroyed: used while the process exits
  return *m;
}

}  // namespace

std::string symbol_for(const void* address, bool code) {
  Inside in;
  Dl_info info{};
  link_map* lm = nullptr;
  if (::dladdr1(address, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || info.dli_fname == nullptr)
    return "";
  const auto addr = reinterpret_cast<uintptr_t>(address);
  // The main program's link map has an empty name: read it through /proc.
  std::string path = info.dli_fname[0] != '\0' && lm != nullptr && lm->l_name[0] != '\0' ? info.dli_fname : "/proc/self/exe";
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = tables().find(path);
  if (it == tables().end()) it = tables().emplace(path, load(path.c_str())).first;
  const SymbolTable& t = it->second;
  const uintptr_t at = t.relative ? addr - (lm != nullptr ? lm->l_addr : reinterpret_cast<uintptr_t>(info.dli_fbase)) : addr;
  auto s = std::upper_bound(t.symbols.begin(), t.symbols.end(), at,
                            [](uintptr_t a, const Symbol& x) { return a < x.start; });
  // The last symbol starting at or before `at` that covers it (sizes may nest).
  while (s != t.symbols.begin()) {
    --s;
    if (at >= s->start && (at < s->start + s->size || (s->size == 0 && at == s->start))) {
      const uintptr_t off = at - s->start;
      const std::string name = demangled(s->name);
      if (off == 0) return name;
      return code ? fmt::format("{}+{:#x}", name, off) : fmt::format("{}+{}", name, off);
    }
    if (at - s->start > (1u << 20)) break;  // far behind: nothing covers it
  }
  // The dynamic symbol table, for stripped objects that export it.
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    const auto off = addr - reinterpret_cast<uintptr_t>(info.dli_saddr);
    if (off == 0) return demangled(info.dli_sname);
    if (code) return fmt::format("{}+{:#x}", demangled(info.dli_sname), off);
  }
  return "";
}

std::string object_name(const void* object) {
  std::string name = symbol_for(object, false);
  return name.empty() ? fmt::format("{}", object) : name;
}

}  // namespace racelab::preload
