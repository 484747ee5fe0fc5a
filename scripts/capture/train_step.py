"""A small training step on one GPU, profiled: the source of the captured evidence fixtures.

Run on a GPU machine (PyTorch with CUDA). Writes a Kineto trace (the PyTorch Profiler's
Chrome-trace JSON, what `torch_trace` parses) of a few steps of a small transformer block in
bf16, with named ranges for the forward, backward and optimizer phases and a one-rank NCCL
all_reduce per step (NCCL_DEBUG output goes to stderr when NCCL_DEBUG is set).

    python3 scripts/capture/train_step.py --trace OUT/trace.json
    ncu --csv python3 scripts/capture/train_step.py --steps 1   # kernels only, no profiler
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional


class Block(nn.Module):
    """Attention + MLP, pre-norm: the kernels a real model's step is made of."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, tokens, 3, self.heads, -1).unbind(2)
        attended = functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.out(attended.transpose(1, 2).reshape(batch, tokens, width))
        return x + self.mlp(self.norm2(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="write the PyTorch Profiler trace here")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    torch.manual_seed(0)
    model = nn.Sequential(*[Block(args.width, 16) for _ in range(args.layers)]).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    data = torch.randn(8, 512, args.width, device="cuda")

    def step() -> None:
        with torch.profiler.record_function("forward"), torch.autocast("cuda", torch.bfloat16):
            loss = model(data).float().pow(2).mean()
        with torch.profiler.record_function("backward"):
            loss.backward()
        with torch.profiler.record_function("allreduce_grads"):
            flat = torch.cat([p.grad.flatten() for p in model.parameters()])
            dist.all_reduce(flat)
        with torch.profiler.record_function("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    if not args.trace:
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
    else:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        schedule = torch.profiler.schedule(wait=1, warmup=1, active=args.steps)
        with torch.profiler.profile(
            activities=activities, schedule=schedule, record_shapes=True, with_stack=False
        ) as profiler:
            for _ in range(args.steps + 2):
                with torch.profiler.record_function("train_step"):
                    step()
                profiler.step()
        torch.cuda.synchronize()
        profiler.export_chrome_trace(args.trace)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
