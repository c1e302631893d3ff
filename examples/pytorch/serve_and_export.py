"""An inference server: request threads answer with the model until told to
stop, while an exporter thread takes an FX graph of the model
(torch.fx.symbolic_trace), as a checkpoint or export job does.

On torch 2.4 to 2.x symbolic_trace patches torch.nn.Module.__call__ for the
whole process while it traces, so a request that calls the model meanwhile
goes through the tracer ("... is not installed as a submodule") or leaves
nodes in the exported graph.

  python serve_and_export.py [--fix none|lock|export_first]   (default: $RACELAB_MITIGATION or none)
  lock          one lock around every request and around the export
  export_first  export once before the server starts, then reuse the graph
"""
import argparse
import os
import threading

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fix", default=os.environ.get("RACELAB_MITIGATION") or "none",
                   choices=("none", "lock", "export_first"))
    p.add_argument("--requests", type=int, default=2, help="request threads")
    args = p.parse_args()
    model = Net().eval()
    reference = str(torch.fx.symbolic_trace(Net()).graph)
    lock = threading.Lock()
    stop = threading.Event()
    served = []
    exported = torch.fx.symbolic_trace(model) if args.fix == "export_first" else None

    @torch.no_grad()
    def handle_requests():
        n = 0
        while not stop.is_set():
            x = torch.randn(2, 8)
            if args.fix == "lock":
                with lock:
                    y = model(x)
            else:
                y = model(x)
            assert y.shape == (2, 4)
            n += 1
        served.append(n)

    def export():
        try:
            for _ in range(2):
                if exported is not None:
                    graph = exported.graph
                elif args.fix == "lock":
                    with lock:
                        graph = torch.fx.symbolic_trace(model).graph
                else:
                    graph = torch.fx.symbolic_trace(model).graph
                assert str(graph) == reference, f"the exported graph differs from the model's:\n{graph}"
        finally:
            stop.set()  # the server stops even when the export failed

    threads = [threading.Thread(target=handle_requests, name=f"request-{i}") for i in range(args.requests)]
    threads.append(threading.Thread(target=export, name="exporter"))
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
