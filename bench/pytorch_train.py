#!/usr/bin/python3
"""The baseline for bench/train-vs-pytorch.sh: the same training as jetfleet-train, written the
way the original study did it, in Python PyTorch with torch.utils.data.DataLoader (Debian's
python3-torch and python3-torchvision).

It reads the same files in their real on-disk formats (MNIST idx, CIFAR-10 binary batches,
GLD-23k JPEGs + train.csv), one sample per __getitem__ with os.pread as a Dataset would, builds
the same models as common/torch/jf_torch.cpp (LeNet-5, CIFAR ResNet-18, VGG-11-BN,
torchvision's MobileNetV3-Large), trains with SGD lr 0.01 momentum 0.9, and times every
minibatch the same way: fetch stall = time waiting for the next batch, compute = forward +
backward + step. It prints one JSON object on stdout.

  pytorch_train.py --model M --data DIR --workers N --batch N --epochs N [--threads N]
                   [--prefetch N] [--seed N] [--max-batches N] [--loader-only]
"""
import argparse
import csv
import json
import os
import resource
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision import transforms


class MnistIdx(torch.utils.data.Dataset):
    def __init__(self, root):
        self.images = os.path.join(root, "train-images-idx3-ubyte")
        self.labels = os.path.join(root, "train-labels-idx1-ubyte")
        with open(self.images, "rb") as f:
            magic, self.n, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051 and rows == 28 and cols == 28
        self.fds = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.fds is None:  # opened lazily so that every worker process has its own
            self.fds = (os.open(self.images, os.O_RDONLY), os.open(self.labels, os.O_RDONLY))
        raw = os.pread(self.fds[0], 784, 16 + i * 784)
        label = os.pread(self.fds[1], 1, 8 + i)[0]
        x = torch.frombuffer(bytearray(raw), dtype=torch.uint8).float().div_(255.0)
        x = x.sub_(0.1307).div_(0.3081).view(1, 28, 28)
        return x, label


class CifarBin(torch.utils.data.Dataset):
    MEAN = torch.tensor([0.4914, 0.4822, 0.4465]).view(3, 1, 1)
    STD = torch.tensor([0.2470, 0.2435, 0.2616]).view(3, 1, 1)

    def __init__(self, root):
        self.files = [os.path.join(root, "data_batch_%d.bin" % k) for k in range(1, 6)]
        self.per_file = os.path.getsize(self.files[0]) // 3073
        self.fds = None

    def __len__(self):
        return self.per_file * len(self.files)

    def __getitem__(self, i):
        if self.fds is None:
            self.fds = [os.open(p, os.O_RDONLY) for p in self.files]
        rec = os.pread(self.fds[i // self.per_file], 3073, (i % self.per_file) * 3073)
        x = torch.frombuffer(bytearray(rec[1:]), dtype=torch.uint8).float().div_(255.0)
        return x.view(3, 32, 32).sub_(self.MEAN).div_(self.STD), rec[0]


class Gld23k(torch.utils.data.Dataset):
    def __init__(self, root):
        from PIL import Image  # noqa: F401  (torchvision's own loader uses PIL)
        with open(os.path.join(root, "train.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.items = [(os.path.join(root, "images", r["image_id"] + ".jpg"), int(r["class"]))
                      for r in rows]
        self.tf = transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        from PIL import Image
        path, label = self.items[i]
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")
        return self.tf(img), label


def open_dataset(root):
    if os.path.exists(os.path.join(root, "train-images-idx3-ubyte")):
        return MnistIdx(root), "mnist"
    if os.path.exists(os.path.join(root, "data_batch_1.bin")):
        return CifarBin(root), "cifar10"
    if os.path.exists(os.path.join(root, "train.csv")):
        return Gld23k(root), "gld23k"
    sys.exit("pytorch_train: no dataset in %s" % root)


class LeNet5(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x.flatten(1))))))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + self.shortcut(x))


class ResNet18Cifar(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.stem, self.bn = nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64)
        layers, cin = [], 64
        for w in (64, 128, 256, 512):
            layers += [BasicBlock(cin, w, 1 if w == 64 else 2), BasicBlock(w, w, 1)]
            cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(F.relu(self.bn(self.stem(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class Vgg11Cifar(nn.Module):
    def __init__(self, classes):
        super().__init__()
        feats, cin = [], 3
        for c in (64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0):
            if c == 0:
                feats.append(nn.MaxPool2d(2))
            else:
                feats += [nn.Conv2d(cin, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU()]
                cin = c
        self.features, self.classifier = nn.Sequential(*feats), nn.Linear(512, classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def make_model(name, classes):
    if name == "lenet5":
        return LeNet5(classes)
    if name == "resnet18":
        return ResNet18Cifar(classes)
    if name == "vgg11":
        return Vgg11Cifar(classes)
    if name == "mobilenetv3":
        return torchvision.models.mobilenet_v3_large(num_classes=classes)
    sys.exit("pytorch_train: unknown model %s" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-batches", type=int, default=0)
    ap.add_argument("--loader-only", action="store_true")
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    ds, kind = open_dataset(a.data)
    classes = 203 if kind == "gld23k" else 10
    kw = {"prefetch_factor": a.prefetch, "persistent_workers": False} if a.workers > 0 else {}
    loader = torch.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=True,
                                         num_workers=a.workers, drop_last=False, **kw)
    model = None if a.loader_only else make_model(a.model, classes)
    opt = None if model is None else torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    epochs = []
    for epoch in range(a.epochs):
        if model is not None:
            model.train()
        t_epoch = time.monotonic()
        stall = compute = 0.0
        samples = 0
        it = iter(loader)
        for b in range(len(loader)):
            if a.max_batches and b >= a.max_batches:
                break
            t0 = time.monotonic()
            x, y = next(it)
            t1 = time.monotonic()
            if model is not None:
                opt.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
            t2 = time.monotonic()
            stall += t1 - t0
            compute += t2 - t1
            samples += x.shape[0]
        del it  # shuts the workers down before the next epoch, as a non-persistent loader does
        e2e = time.monotonic() - t_epoch
        epochs.append({"epoch": epoch, "warmup": epoch == 0, "e2e_s": e2e, "fetch_stall_s": stall,
                       "compute_s": compute, "samples": samples, "samples_per_s": samples / e2e})
    ru_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ru_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    json.dump({"side": "pytorch", "model": a.model, "dataset": kind, "workers": a.workers,
               "batch": a.batch, "threads": torch.get_num_threads(),
               "loader_only": a.loader_only, "torch_version": torch.__version__,
               "epochs": epochs, "peak_rss_kb": ru_self, "peak_rss_children_kb": ru_child},
              sys.stdout)
    print()


if __name__ == "__main__":
    main()
