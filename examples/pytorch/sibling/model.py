"""The model and its compiled training step, imported by train.py."""
import torch


class TinyNet(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = torch.nn.Linear(dim, dim)

    def forward(self, x):
        return torch.tanh(self.fc(x))


def make_step(net, lr):
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    forward = torch.compile(net, backend="aot_eager")

    def step(x):
        loss = forward(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step
