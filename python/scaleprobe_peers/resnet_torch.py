"""Times training steps of the same ResNet in PyTorch on the CPU, for scripts/bench-peers.

    OMP_NUM_THREADS=N OPENBLAS_NUM_THREADS=N PYTHONPATH=python /usr/bin/python3 -m scaleprobe_peers.resnet_torch \
        --threads N [--model resnet20] [--batch 32] [--steps 14] [--init CHECKPOINT]

The model is resnet_train's (trainers/resnet/model.hpp): 3x3 stem conv + BN + ReLU, basic blocks,
1x1 stride-s conv + BN shortcuts where the shape changes (option B, torchvision names), global
average pool, fc. A step is what resnet_train times (minus data loading): forward + mean
cross-entropy, zero_grad + backward, SGD (lr 0.1, momentum 0.9, weight decay 5e-4), batch norm
in training mode. --init loads resnet_train's --save-init checkpoint (torchvision names, BN
running statistics too), so both start from the same weights. Inputs are random normalised 32x32
images (timing only). Prints one JSON line (torch_peer.py): the peer's identity,
wall and process-CPU time per step over all steps but the warm-up, the median, the first loss,
images/s from the median.
"""
import torch
from torch import nn
from torch.nn import functional as F

from .torch_peer import bind_threads, peer_arguments, report, start_from_trainer_weights, time_steps

PRESETS = {  # stages, blocks per stage, width
    "resnet20": (3, [3, 3, 3], 16),
    "resnet32": (3, [5, 5, 5], 16),
    "resnet56": (3, [9, 9, 9], 16),
    "resnet18": (4, [2, 2, 2, 2], 64),
}


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    def __init__(self, blocks, width, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        cin = width
        for s, n in enumerate(blocks):
            cout = width << s
            layer = []
            for b in range(n):
                layer.append(BasicBlock(cin, cout, 2 if s > 0 and b == 0 else 1))
                cin = cout
            setattr(self, f"layer{s + 1}", nn.Sequential(*layer))
        self.num_stages = len(blocks)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        for s in range(self.num_stages):
            x = getattr(self, f"layer{s + 1}")(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    a = peer_arguments("resnet_train", PRESETS, default_model="resnet20", default_batch=32)
    bind_threads(a.threads)
    torch.manual_seed(0)
    _, blocks, width = PRESETS[a.model]
    model = ResNet(blocks, width)
    logit_diff = start_from_trainer_weights(model, a.init, "scaleprobe-resnet-checkpoint") if a.init else None
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    B = a.batch
    gen = torch.Generator().manual_seed(0)

    def step():
        x = torch.randn(B, 3, 32, 32, generator=gen)
        y = torch.randint(0, 10, (B,), generator=gen)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()

    r = time_steps(step, a.steps, profile=a.profile)
    report(a, r, logit_diff, parameters=sum(p.numel() for p in model.parameters()), images_per_s=B / r["wall_median_s"])


if __name__ == "__main__":
    main()
