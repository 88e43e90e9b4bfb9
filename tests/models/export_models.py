"""Exports the real test models (torchvision CNNs, a DCGAN generator, a BERT encoder, a GPT-2
style decoder with dynamic axes, an FCOS-style detector with NonMaxSuppression) to ONNX.

Run with Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14), not the project's .venv:
  export_models.py --list                    print every model's name and label, one a line
  export_models.py OUT_DIR NAME...           write OUT_DIR/NAME.onnx, NAME.inputs.npz,
                                             NAME.torch_outputs.npz and NAME.meta.json

Weights are random but seeded (torch.manual_seed); BatchNorm statistics are calibrated on random
data and then perturbed, so the networks stay numerically sane while BN folding meets non-trivial
running means and variances. Models are exported in eval mode without the exporter's Conv+BN
fusion, so the BatchNormalization nodes reach collage. tests/models/build_models.sh drives this
script and then make_references.py (ONNX Runtime outputs).
"""
import json
import math
import os
import pathlib
import sys
import time
import warnings
import zlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

import numpy as np


@dataclass(frozen=True)
class Spec:
    name: str
    label: str         # "small" (ctest label models) or "full" (ctest label models-full)
    opset: int
    make: Callable     # () -> (torch module, {input name: np.ndarray}, [output names])
    rtol: float        # bound on max|collage - reference| / max|reference| (README.md)
    # Symbolic dimensions, as torch.onnx.export's dynamic_axes ({name: {axis: "batch"}}); the
    # model then imports with the shapes of its inputs given (meta.json records them).
    dynamic_axes: Dict = None


# ---- inputs -------------------------------------------------------------------------------------

def image(shape: Tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(np.float32)


def token_inputs(batch: int, seq: int, vocab: int, seed: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    for row in range(batch):  # padding at the end, a different length per row
        mask[row, seq - seq // 4 - row * seq // 8:] = 0
    return {"input_ids": ids, "attention_mask": mask}


# ---- architectures --------------------------------------------------------------------------------

def dcgan_generator(nz: int, ngf: int, nc: int = 3):
    """The DCGAN generator of Radford et al. (PyTorch example): 1x1 latent -> 64x64 image."""
    from torch import nn

    def up(cin, cout, stride, pad):
        return [nn.ConvTranspose2d(cin, cout, 4, stride, pad, bias=False), nn.BatchNorm2d(cout),
                nn.ReLU(True)]

    net = nn.Sequential(*up(nz, ngf * 8, 1, 0), *up(ngf * 8, ngf * 4, 2, 1),
                        *up(ngf * 4, ngf * 2, 2, 1), *up(ngf * 2, ngf, 2, 1),
                        nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())
    for m in net.modules():
        if isinstance(m, nn.ConvTranspose2d):
            nn.init.normal_(m.weight, 0.0, 0.02)
    return net


def bert_encoder(vocab: int, hidden: int, layers: int, heads: int, intermediate: int):
    """A BERT encoder in plain torch, written the way Hugging Face's BertModel computes it."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    eps = 1e-12

    class Embeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word = nn.Embedding(vocab, hidden)
            self.position = nn.Embedding(512, hidden)
            self.token_type = nn.Embedding(2, hidden)
            self.norm = nn.LayerNorm(hidden, eps=eps)
            self.register_buffer("position_ids", torch.arange(512).unsqueeze(0))

        def forward(self, input_ids):
            positions = self.position_ids[:, :input_ids.size(1)]
            token_types = torch.zeros_like(input_ids)
            x = self.word(input_ids) + self.position(positions) + self.token_type(token_types)
            return self.norm(x)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.head_dim = hidden // heads
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
            self.attn_out = nn.Linear(hidden, hidden)
            self.attn_norm = nn.LayerNorm(hidden, eps=eps)
            self.ffn_in = nn.Linear(hidden, intermediate)
            self.ffn_out = nn.Linear(intermediate, hidden)
            self.ffn_norm = nn.LayerNorm(hidden, eps=eps)

        def forward(self, x, mask):
            b, s = x.size(0), x.size(1)

            def heads_first(t):
                return t.view(b, s, heads, self.head_dim).transpose(1, 2)

            q, k, v = heads_first(self.query(x)), heads_first(self.key(x)), heads_first(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            probs = torch.softmax(scores + mask, dim=-1)
            context = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, hidden)
            x = self.attn_norm(x + self.attn_out(context))
            return self.ffn_norm(x + self.ffn_out(F.gelu(self.ffn_in(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = Embeddings()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, input_ids, attention_mask):
            mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
            x = self.embeddings(input_ids)
            for layer in self.layers:
                x = layer(x, mask)
            return x

    net = Encoder()
    for m in net.modules():  # BERT's initialiser, plus non-trivial biases and norm parameters
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear):
            nn.init.uniform_(m.bias, -0.05, 0.05)
        if isinstance(m, nn.LayerNorm):
            nn.init.uniform_(m.weight, 0.8, 1.2)
            nn.init.uniform_(m.bias, -0.1, 0.1)
    return net


def gpt2_decoder(vocab: int, positions: int, hidden: int, layers: int, heads: int):
    """A decoder-only transformer written the way Hugging Face's GPT-2 computes it: learned
    positions, pre-norm blocks, a causal mask sliced from a lower-triangular buffer to the
    sequence length and applied with torch.where, tanh-approximated GELU, the output projection
    tied to the token embedding."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(hidden, 3 * hidden)
            self.c_proj = nn.Linear(hidden, hidden)
            causal = torch.tril(torch.ones(positions, positions, dtype=torch.bool))
            self.register_buffer("bias", causal.view(1, 1, positions, positions))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(x).split(hidden, dim=2)

            def heads_first(z):
                return z.view(b, t, heads, c // heads).transpose(1, 2)

            q, k, v = heads_first(q), heads_first(k), heads_first(v)
            w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(c // heads)
            lowest = torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype)
            w = torch.where(self.bias[:, :, :t, :t], w, lowest)
            a = torch.matmul(F.softmax(w, dim=-1), v)
            return self.c_proj(a.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(hidden)
            self.fc = nn.Linear(hidden, 4 * hidden)
            self.proj = nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(positions, hidden)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(hidden)

        def forward(self, input_ids):
            positions_ = torch.arange(0, input_ids.size(1), dtype=torch.long).unsqueeze(0)
            x = self.wte(input_ids) + self.wpe(positions_)
            for block in self.h:
                x = block(x)
            return torch.matmul(self.ln_f(x), self.wte.weight.t())

    net = GPT2()
    for m in net.modules():  # GPT-2's initialiser, plus non-trivial biases and norm parameters
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear):
            nn.init.uniform_(m.bias, -0.05, 0.05)
        if isinstance(m, nn.LayerNorm):
            nn.init.uniform_(m.weight, 0.8, 1.2)
            nn.init.uniform_(m.bias, -0.1, 0.1)
    return net


def fcos_detector(classes: int, max_detections: int):
    """A one-stage, anchor-free detector in the manner of FCOS: torchvision ResNet-18 stages 1-3
    as the backbone (stride 16), a shared 3x3 head giving class logits and left/top/right/bottom
    distances at every location, boxes decoded around the location centres, a score threshold
    (NonZero) and NonMaxSuppression (torchvision.ops.nms), the best `max_detections` kept. The
    number of boxes is known only at run time."""
    import torch
    import torchvision
    from torch import nn

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            r = torchvision.models.resnet18(weights=None)
            self.backbone = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2,
                                          r.layer3)
            self.head = nn.Sequential(nn.Conv2d(256, 128, 3, padding=1), nn.ReLU())
            self.cls = nn.Conv2d(128, classes, 3, padding=1)
            self.box = nn.Conv2d(128, 4, 3, padding=1)
            self.stride = 16

        def forward(self, image):
            f = self.head(self.backbone(image))
            _, _, h, w = f.shape
            logits = self.cls(f).flatten(2)[0].t()
            ltrb = self.box(f).flatten(2)[0].t().exp() * self.stride
            ys = (torch.arange(h, dtype=torch.float32) + 0.5) * self.stride
            xs = (torch.arange(w, dtype=torch.float32) + 0.5) * self.stride
            cy, cx = torch.meshgrid(ys, xs, indexing="ij")
            cx, cy = cx.reshape(-1), cy.reshape(-1)
            boxes = torch.stack([cx - ltrb[:, 0], cy - ltrb[:, 1], cx + ltrb[:, 2],
                                 cy + ltrb[:, 3]], 1)
            scores = logits.sigmoid().amax(1)
            candidates = torch.nonzero(scores > 0.3).squeeze(1)
            boxes, scores = boxes[candidates], scores[candidates]
            keep = torchvision.ops.nms(boxes, scores, 0.5)[:max_detections]
            return boxes[keep], scores[keep]

    return Detector()


def randomize_batchnorm(net, calib_input) -> None:
    """Sets every BatchNorm's statistics from one random batch, then perturbs them and its affine
    parameters, so eval-mode BN is a non-trivial per-channel affine map on O(1) activations."""
    import torch
    from torch import nn

    norms = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for bn in norms:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average: the statistics of exactly this batch
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.25, 0.25)
        net.train()
        net(calib_input)
        net.eval()
        for bn in norms:
            std = bn.running_var.sqrt()
            bn.running_mean.add_(0.05 * std * torch.randn_like(std))
            bn.running_var.mul_(torch.empty_like(std).uniform_(0.9, 1.1))


def cnn(build: Callable, shape: Tuple[int, ...], seed: int, calib_batch: int,
        output: str = "logits"):
    """A make() for an image model: builds the net, calibrates BatchNorm on calib_batch random
    images (small inputs need more of them: late layers have few spatial positions), makes the
    input."""
    def make():
        import torch
        net = build()
        calib = torch.from_numpy(image((calib_batch,) + shape[1:], seed + 1))
        randomize_batchnorm(net, calib)
        return net, {"input": image(shape, seed)}, [output]
    return make


def torchvision_model(fn: str, **kwargs):
    def build():
        import torchvision
        return getattr(torchvision.models, fn)(weights=None, **kwargs)
    return build


def vit_b_16():
    """torchvision's ViT-B/16 with its classifier initialised randomly (torchvision zeroes it, so
    every logit would be 0 and the comparison would check nothing)."""
    import torch
    import torchvision
    net = torchvision.models.vit_b_16(weights=None)
    with torch.no_grad():
        net.heads.head.weight.normal_(0.0, 0.02)
    return net


def resnext_small():
    from torchvision.models.resnet import Bottleneck, ResNet
    return ResNet(Bottleneck, [1, 1, 1, 1], groups=32, width_per_group=4)


def bert(batch: int, seq: int, vocab: int, hidden: int, layers: int, heads: int,
         intermediate: int, seed: int):
    def make():
        net = bert_encoder(vocab, hidden, layers, heads, intermediate).eval()
        return net, token_inputs(batch, seq, vocab, seed), ["last_hidden_state"]
    return make


def gpt2(batch: int, seq: int, vocab: int, positions: int, hidden: int, layers: int, heads: int,
         seed: int):
    def make():
        net = gpt2_decoder(vocab, positions, hidden, layers, heads).eval()
        ids = np.random.default_rng(seed).integers(0, vocab, (batch, seq), dtype=np.int64)
        return net, {"input_ids": ids}, ["logits"]
    return make


def detector(size: int, seed: int):
    def make():
        import torch
        net = fcos_detector(classes=5, max_detections=20)
        randomize_batchnorm(net, torch.from_numpy(image((8, 3, size, size), seed + 1)))
        return net, {"image": image((1, 3, size, size), seed)}, ["boxes", "scores"]
    return make


def greedy_decoder(vocab: int, hidden: int, max_len: int, seed: int):
    """A recurrent decoder generating tokens greedily until it emits its end token or max_len
    of them: a Loop whose trip count the data decides (torch.jit.script keeps the while loop),
    a loop-carried token list that grows by one each step, an If in the body (the exporter's
    `and` of the two conditions), Gemm, Tanh and ArgMax inside it."""
    def make():
        import torch
        from typing import Tuple

        class GreedyDecoder(torch.nn.Module):
            def __init__(self, eos: int):
                super().__init__()
                self.embed = torch.nn.Embedding(vocab, hidden)
                self.w_ih = torch.nn.Linear(hidden, hidden)
                self.w_hh = torch.nn.Linear(hidden, hidden)
                self.out = torch.nn.Linear(hidden, vocab)
                self.max_len = max_len
                self.eos = eos

            def forward(self, h0: torch.Tensor,
                        start: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
                h = h0
                tok = start
                tokens = start
                i = 0
                going = True
                while i < self.max_len and going:
                    h = torch.tanh(self.w_ih(self.embed(tok)) + self.w_hh(h))
                    tok = self.out(h).argmax(dim=1)
                    tokens = torch.cat([tokens, tok])
                    going = bool(tok[0] != self.eos)
                    i += 1
                return tokens, h

        h0 = torch.from_numpy(image((1, hidden), seed))
        start = torch.tensor([1])
        net = GreedyDecoder(eos=-1).eval()
        with torch.no_grad():
            free = net(h0, start)[0]
        # The end token: the one generated at step 12 without an end, so that the loop stops
        # there (or earlier), well before max_len.
        net.eos = int(free[12])
        return torch.jit.script(net), {"h0": h0.numpy(), "start": start.numpy()}, ["tokens", "h"]
    return make


GOOGLENET = dict(aux_logits=False, init_weights=True, transform_input=False)

SPECS: List[Spec] = [
    # Width- or resolution-reduced variants of the same architecture code: ctest label "models".
    Spec("resnet50_small", "small", 13,
         cnn(torchvision_model("resnet50"), (2, 3, 64, 64), 11, 16), 5e-4),
    Spec("mobilenetv2_small", "small", 17,
         cnn(torchvision_model("mobilenet_v2", width_mult=0.5), (2, 3, 96, 96), 12, 16), 5e-4),
    Spec("resnext50_small", "small", 13,
         cnn(resnext_small, (2, 3, 64, 64), 13, 16), 5e-4),
    Spec("googlenet_small", "small", 17,
         cnn(torchvision_model("googlenet", **GOOGLENET), (2, 3, 64, 64), 14, 16), 5e-4),
    Spec("inceptionv3_small", "small", 13,
         cnn(torchvision_model("inception_v3", **GOOGLENET), (2, 3, 75, 75), 15, 16), 5e-4),
    Spec("dcgan_small", "small", 17,
         cnn(lambda: dcgan_generator(100, 16), (2, 100, 1, 1), 16, 16, "image"), 1e-4),
    Spec("bert_small", "small", 14, bert(2, 32, 4096, 128, 2, 4, 512, 17), 1e-4),
    Spec("squeezenet_small", "small", 17,
         cnn(torchvision_model("squeezenet1_1"), (2, 3, 64, 64), 18, 16), 1e-4),
    # Exported with symbolic batch and sequence: shape arithmetic in the graph, folded by the
    # import once the input shape is given.
    Spec("gpt2_small", "small", 17, gpt2(2, 16, 1024, 64, 64, 2, 4, 19), 1e-4,
         dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                       "logits": {0: "batch", 1: "sequence"}}),
    # NonZero and NonMaxSuppression: outputs whose size is known only at run time.
    Spec("detector_small", "small", 17, detector(128, 20), 1e-4),
    # A Loop the import cannot unroll: its trip count is decided by the generated tokens.
    Spec("decoder_small", "small", 17, greedy_decoder(256, 64, 48, 39), 1e-4),
    # Full size: ctest label "models-full".
    Spec("resnet50", "full", 13,
         cnn(torchvision_model("resnet50"), (1, 3, 224, 224), 21, 4), 5e-4),
    Spec("mobilenetv2", "full", 17,
         cnn(torchvision_model("mobilenet_v2"), (1, 3, 224, 224), 22, 4), 5e-4),
    Spec("resnext50", "full", 13,
         cnn(torchvision_model("resnext50_32x4d"), (1, 3, 224, 224), 23, 4), 5e-4),
    Spec("googlenet", "full", 17,
         cnn(torchvision_model("googlenet", **GOOGLENET), (1, 3, 224, 224), 24, 4), 5e-4),
    Spec("inceptionv3", "full", 13,
         cnn(torchvision_model("inception_v3", **GOOGLENET), (1, 3, 299, 299), 25, 4), 5e-4),
    Spec("dcgan", "full", 17,
         cnn(lambda: dcgan_generator(100, 64), (1, 100, 1, 1), 26, 16, "image"), 1e-4),
    Spec("bert", "full", 14, bert(1, 128, 30522, 768, 12, 12, 3072, 27), 1e-4),
    Spec("squeezenet", "full", 17,
         cnn(torchvision_model("squeezenet1_1"), (1, 3, 224, 224), 28, 4), 1e-4),
    # Depthwise 3x3/5x5 convolutions with squeeze-and-excitation and SiLU.
    Spec("efficientnet_b0", "full", 17,
         cnn(torchvision_model("efficientnet_b0"), (1, 3, 224, 224), 29, 4), 5e-4),
    # Grouped convolutions of 8-channel groups with squeeze-and-excitation.
    Spec("regnet_y_400mf", "full", 17,
         cnn(torchvision_model("regnet_y_400mf"), (1, 3, 224, 224), 30, 4), 5e-4),
    # The rest of the benchmark set (bench/models/model_bench): a densely connected CNN, a
    # modern CNN (7x7 depthwise, LayerNorm, GELU), a vision transformer and a GPT-2 decoder.
    Spec("densenet121", "full", 17,
         cnn(torchvision_model("densenet121"), (1, 3, 224, 224), 31, 4), 5e-4),
    Spec("convnext_tiny", "full", 17,
         cnn(torchvision_model("convnext_tiny"), (1, 3, 224, 224), 32, 4), 5e-4),
    Spec("vit_b_16", "full", 17,
         cnn(vit_b_16, (1, 3, 224, 224), 33, 4), 5e-4),
    Spec("gpt2", "full", 17, gpt2(1, 128, 50257, 1024, 768, 12, 12, 34), 1e-4),
    # The held-out set (model_bench --heldout): architectures measured but not tuned for.
    Spec("mobilenet_v3_large", "full", 17,
         cnn(torchvision_model("mobilenet_v3_large"), (1, 3, 224, 224), 35, 4), 5e-4),
    Spec("shufflenet_v2", "full", 17,
         cnn(torchvision_model("shufflenet_v2_x1_0"), (1, 3, 224, 224), 36, 4), 5e-4),
    Spec("mnasnet1_0", "full", 17,
         cnn(torchvision_model("mnasnet1_0"), (1, 3, 224, 224), 37, 4), 5e-4),
    Spec("swin_t", "full", 17,
         cnn(torchvision_model("swin_t"), (1, 3, 224, 224), 38, 4), 5e-4),
]


def tensor_info(name: str, array: np.ndarray) -> Dict:
    return {"name": name, "shape": list(array.shape), "dtype": str(array.dtype)}


def export(spec: Spec, out: pathlib.Path) -> None:
    import torch

    start = time.monotonic()
    torch.manual_seed(zlib.crc32(spec.name.encode()))
    net, inputs, output_names = spec.make()
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    with torch.no_grad():
        outputs = net(*args)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    onnx_path = out / f"{spec.name}.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python ints from x.size()
        # PRESERVE exports eval-mode semantics without the exporter folding BN into Conv.
        torch.onnx.export(net, args, str(onnx_path), opset_version=spec.opset,
                          input_names=list(inputs), output_names=output_names,
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True,
                          dynamic_axes=spec.dynamic_axes)
    np.savez(out / f"{spec.name}.inputs.npz", **inputs)
    np.savez(out / f"{spec.name}.torch_outputs.npz",
             **{n: o.numpy() for n, o in zip(output_names, outputs)})
    meta = {
        "name": spec.name,
        "label": spec.label,
        "opset": spec.opset,
        "onnx": onnx_path.name,
        "inputs": [tensor_info(n, a) for n, a in inputs.items()],
        "outputs": [tensor_info(n, o.numpy()) for n, o in zip(output_names, outputs)],
        "rtol": spec.rtol,
        "dynamic_axes": spec.dynamic_axes or {},
        "export_seconds": round(time.monotonic() - start, 2),
        "onnx_bytes": onnx_path.stat().st_size,
    }
    (out / f"{spec.name}.meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"exported {spec.name}: {meta['onnx_bytes'] / 1e6:.1f} MB in "
          f"{meta['export_seconds']:.1f} s", flush=True)


def main(argv: List[str]) -> int:
    by_name = {s.name: s for s in SPECS}
    if argv == ["--list"]:
        for s in SPECS:
            print(s.name, s.label)
        return 0
    if len(argv) < 2 or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    unknown = [n for n in argv[1:] if n not in by_name]
    if unknown:
        print(f"unknown model(s): {' '.join(unknown)}; known: {' '.join(by_name)}", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    out = pathlib.Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:]:
        export(by_name[name], out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
