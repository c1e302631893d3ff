"""flex_attention compiled, with a mask_mod that reads a module constant B:
dynamo reaches mask_mod through the BlockMask and guards on B through
sys.modules['__main__']. Under a pyrun that ran scripts in a bare dict every
trial failed with "module '__main__' has no attribute 'B'"."""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

B = 16  # the block size the mask reads


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx // B) >= (kv_idx // B)


attend = torch.compile(flex_attention, backend="aot_eager")
S = 64
block_mask = create_block_mask(mask_mod, 1, 1, S, S, device="cpu")
q, k, v = (torch.randn(1, 1, S, 8) for _ in range(3))
out = attend(q, k, v, block_mask=block_mask)
assert out.shape == (1, 1, S, 8)
