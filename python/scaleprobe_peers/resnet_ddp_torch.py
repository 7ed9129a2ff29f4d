"""Times data-parallel training steps of the same ResNet under PyTorch DDP (gloo, CPU), per bucket cap.

    PYTHONPATH=python /usr/bin/python3 -m scaleprobe_peers.resnet_ddp_torch [--model resnet20]
        [--batch 32] [--steps 12] [--caps 25] [--ranks 2] [--threads 1] [--cpu-sets '0;1'] [--comm-timing]
        [--raw FILE]

The PyTorch counterpart of `mpirun -np R resnet_train -B B --bucket-cap-mb CAPS` (scripts/bench-peers'
scaling rows). The harness, its options, its cases (each cap, then the no_sync case: the same step
without gradient communication) and its JSON lines are ddp_peer.py's ddp_main, described in
gpt_ddp_torch.py; this module gives it the model and the step of resnet_torch.py (the 1-rank
peer): resnet_train's model, random normalised 32x32 images and labels drawn outside the timed
region, forward + mean cross-entropy | zero_grad + backward | SGD (lr 0.1,
momentum 0.9, weight decay 5e-4), batch norm in training mode on each rank's own batch. The BN
running statistics stay each rank's own (broadcast_buffers=False), as in resnet_train, which shares
rank 0's only for validation and saving. The rate is images_per_s (global images per step /
iteration_mean_s).
"""
from .ddp_peer import DDPPeer, Workload, ddp_main

# resnet_torch.PRESETS' keys (a test checks): the launcher does not import torch, resnet_torch does
MODELS = ("resnet20", "resnet32", "resnet56", "resnet18")


def workload(a):
    import torch
    from torch.nn import functional as F

    from .resnet_torch import PRESETS, ResNet  # the 1-rank peer's model

    _, blocks, width = PRESETS[a.model]
    model = ResNet(blocks, width)
    B = a.batch
    return Workload(model=model, checkpoint_format="scaleprobe-resnet-checkpoint",
                    batch=lambda gen: (torch.randn(B, 3, 32, 32, generator=gen),
                                       torch.randint(0, 10, (B,), generator=gen)),
                    loss=F.cross_entropy,
                    optimizer=torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4))


PEER = DDPPeer(prog="resnet_ddp_torch", module="scaleprobe_peers.resnet_ddp_torch",
               presets=dict.fromkeys(MODELS), default_model="resnet20", default_batch=32, default_caps="25",
               unit="images", units_per_row=lambda model: 1, describe=lambda model: {}, workload=workload)

if __name__ == "__main__":
    ddp_main(PEER)
