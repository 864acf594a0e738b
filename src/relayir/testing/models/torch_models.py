"""PyTorch twins of the built-in workloads: the independent references they are checked
against, and the eager baselines benchmarks compare with.

Each module's ``state_dict()`` keys are the Relay builder's parameter names, so
``load(module, params)`` is a strict ``load_state_dict`` (batch norm's
``num_batches_tracked`` counter is the one key the Relay side has no use for; torch
fills it in). The architecture tables are shared with the Relay builders.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .bert import LAYER_NORM_EPS
from .mobilenet import _SETTINGS, make_divisible
from .resnet import _DEPTHS, _EXPANSION

# ---------------------------------------------------------------- MLP


class MLP(nn.Module):
    """The relayir MLP; raw parameters so the keys are ``fc1_weight`` like the builder's."""

    def __init__(self, in_features: int = 784, hidden: int = 256, num_classes: int = 10):
        super().__init__()
        self.fc1_weight = nn.Parameter(torch.empty(hidden, in_features))
        self.fc1_bias = nn.Parameter(torch.empty(hidden))
        self.fc2_weight = nn.Parameter(torch.empty(num_classes, hidden))
        self.fc2_bias = nn.Parameter(torch.empty(num_classes))

    def forward(self, x):
        h = F.relu(F.linear(x, self.fc1_weight, self.fc1_bias))
        return F.softmax(F.linear(h, self.fc2_weight, self.fc2_bias), dim=-1)


# ---------------------------------------------------------------- ResNet (torchvision)


def _conv(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int, downsample):
        super().__init__()
        self.conv1 = _conv(inplanes, planes, 3, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = _conv(planes, planes, 3)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


class Bottleneck(nn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int, downsample):
        super().__init__()
        self.conv1 = _conv(inplanes, planes, 1)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = _conv(planes, planes, 3, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = _conv(planes, planes * 4, 1)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU()
        self.downsample = downsample

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    def __init__(self, num_layers: int = 18, num_classes: int = 1000):
        super().__init__()
        kind, stages = _DEPTHS[num_layers]
        block, expansion = (BasicBlock if kind == "basic" else Bottleneck), _EXPANSION[kind]
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes = 64
        for i, blocks in enumerate(stages):
            planes, layers = 64 * 2 ** i, []
            for j in range(blocks):
                stride = 2 if i > 0 and j == 0 else 1
                down = None
                if stride != 1 or inplanes != planes * expansion:
                    down = nn.Sequential(_conv(inplanes, planes * expansion, 1, stride),
                                         nn.BatchNorm2d(planes * expansion))
                layers.append(block(inplanes, planes, stride, down))
                inplanes = planes * expansion
            setattr(self, f"layer{i + 1}", nn.Sequential(*layers))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ---------------------------------------------------------------- MobileNetV2 (torchvision)


def _conv_bn_relu6(cin: int, cout: int, kernel: int, stride: int = 1,
                   groups: int = 1) -> nn.Sequential:
    return nn.Sequential(_conv(cin, cout, kernel, stride, groups), nn.BatchNorm2d(cout),
                         nn.ReLU6())


class InvertedResidual(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = [_conv_bn_relu6(inp, hidden, 1)] if expand_ratio != 1 else []
        layers += [_conv_bn_relu6(hidden, hidden, 3, stride, hidden), _conv(hidden, oup, 1),
                   nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0):
        super().__init__()
        cin = make_divisible(32 * width_mult)
        last = make_divisible(1280 * max(1.0, width_mult))
        features = [_conv_bn_relu6(3, cin, 3, 2)]
        for t, c, n, s in _SETTINGS:
            cout = make_divisible(c * width_mult)
            for j in range(n):
                features.append(InvertedResidual(cin, cout, s if j == 0 else 1, t))
                cin = cout
        features.append(_conv_bn_relu6(cin, last, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


# ---------------------------------------------------------------- BERT (Hugging Face names)


class _BertSelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape

        def split(t):
            return t.view(b, s, self.heads, h // self.heads).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
        ctx = F.softmax(scores, dim=-1) @ v  # (b, heads, s, head_dim)
        return ctx.transpose(1, 2).reshape(b, s, h)


class _DenseLayerNorm(nn.Module):
    """Hugging Face's BertSelfOutput / BertOutput: ``LayerNorm(dense(x) + residual)``."""

    def __init__(self, cin: int, hidden: int):
        super().__init__()
        self.dense = nn.Linear(cin, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=LAYER_NORM_EPS)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class _BertAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.self = _BertSelfAttention(hidden, heads)
        self.output = _DenseLayerNorm(hidden, hidden)

    def forward(self, x):
        return self.output(self.self(x), x)


class _BertIntermediate(nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.dense = nn.Linear(hidden, intermediate)

    def forward(self, x):
        return F.gelu(self.dense(x))  # the exact, erf-based GELU


class _BertLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int):
        super().__init__()
        self.attention = _BertAttention(hidden, heads)
        self.intermediate = _BertIntermediate(hidden, intermediate)
        self.output = _DenseLayerNorm(intermediate, hidden)

    def forward(self, x):
        x = self.attention(x)
        return self.output(self.intermediate(x), x)


class _BertEncoder(nn.Module):
    def __init__(self, num_layers: int, hidden: int, heads: int, intermediate: int):
        super().__init__()
        self.layer = nn.ModuleList(_BertLayer(hidden, heads, intermediate)
                                   for _ in range(num_layers))

    def forward(self, x):
        for layer in self.layer:
            x = layer(x)
        return x


class _BertEmbeddings(nn.Module):
    def __init__(self, vocab: int, hidden: int, max_position: int, type_vocab: int):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_position, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=LAYER_NORM_EPS)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = (self.word_embeddings(ids) + self.position_embeddings(pos)
             + self.token_type_embeddings(torch.zeros_like(ids)))
        return self.LayerNorm(x)


class Bert(nn.Module):
    """``BertModel(add_pooling_layer=False)`` without masks: ids -> last hidden state."""

    def __init__(self, num_layers: int = 4, hidden: int = 256, heads: int = 4,
                 intermediate: int = 1024, vocab: int = 30522, max_position: int = 512,
                 type_vocab: int = 2):
        super().__init__()
        self.embeddings = _BertEmbeddings(vocab, hidden, max_position, type_vocab)
        self.encoder = _BertEncoder(num_layers, hidden, heads, intermediate)

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))


# ---------------------------------------------------------------- LSTM


class LSTMFinalHidden(nn.LSTM):
    """``nn.LSTM`` returning only ``h_n[0]`` (what ``lstm_recursive`` computes)."""

    def forward(self, x):
        return super().forward(x)[1][0][0]


class LSTMOutput(nn.LSTM):
    """``nn.LSTM`` returning only the stacked hidden states (what ``lstm`` computes)."""

    def forward(self, x):
        return super().forward(x)[0]


# ---------------------------------------------------------------- building and running


def _mlp(in_features=784, hidden=256, num_classes=10, **_):
    return MLP(in_features, hidden, num_classes)


def _resnet(num_layers):
    return lambda num_classes=1000, **_: ResNet(num_layers, num_classes)


def _mobilenet_v2(num_classes=1000, width_mult=1.0, **_):
    return MobileNetV2(num_classes, width_mult)


def _bert(num_layers=4, hidden=256, heads=4, intermediate=1024, vocab=30522,
          max_position=512, type_vocab=2, **_):
    return Bert(num_layers, hidden, heads, intermediate, vocab, max_position, type_vocab)


def _lstm(cls):
    return lambda input_size=128, hidden_size=256, **_: cls(input_size, hidden_size)


MODELS = {
    "mlp": _mlp,
    "resnet18": _resnet(18),
    "resnet50": _resnet(50),
    "mobilenet_v2": _mobilenet_v2,
    "bert": _bert,
    "lstm": _lstm(LSTMOutput),
    "lstm_recursive": _lstm(LSTMFinalHidden),
}


def build(name: str, **config) -> nn.Module:
    """The untrained torch twin of workload ``name``, built with the builder's knobs."""
    return MODELS[name](**config)


def load(module: nn.Module, params: dict[str, np.ndarray]) -> nn.Module:
    """Load relayir ``params`` (a strict state-dict load) and switch to eval mode."""
    module.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in params.items()})
    return module.eval()


def run(name: str, params: dict[str, np.ndarray], *inputs: np.ndarray,
        dtype: torch.dtype = torch.float64, **config) -> np.ndarray:
    """Workload ``name`` in PyTorch eager on numpy ``inputs``. Float64 by default: an
    oracle about 1e9 times more precise than the float32 programs it checks."""
    module = load(build(name, **config), params).to(dtype)
    args = [torch.from_numpy(np.asarray(x)) for x in inputs]
    args = [a.to(dtype) if a.is_floating_point() else a for a in args]
    with torch.no_grad():
        return module(*args).numpy()
