#!/usr/bin/env python3
"""Checks that the bundled model registry is self-consistent.

For every transformer model in registries/models/*.mls (a model with `layers`,
`hidden` and `heads`), recomputes the parameter count from the architecture
fields and checks it against `params` within 2% (and `active_params`, when
given, within 5%). Models are read through `mlsc --emit=ir`, so derived
entities (`model a : b { ... }`) and expressions are resolved by the compiler
itself.

usage: check-model-params.py [--mlsc PATH] [--verbose] SRC_ROOT

Architecture assumptions (what the count includes)
--------------------------------------------------
Embeddings   vocab x hidden for the token table. `positions = learned` adds a
             context x hidden position table (GPT-2, GPT-3, MT-NLG, BERT,
             PanGu). An encoder with a vocabulary (BERT) adds 2 x hidden token
             type embeddings, the embedding LayerNorm (2 x hidden) and the
             pooler (hidden^2 + hidden); its masked-LM head is tied to the
             token table and is not counted.
Vision       a model with `patch` (ViT) has a patch projection
             3 x patch^2 x hidden + hidden, a class token (hidden), a learned
             position table ((image/patch)^2 + 1) x hidden, a final LayerNorm
             and a classifier head hidden x classes + classes.
Output head  vocab x hidden unless `tied_embeddings = true` (GPT-2, GPT-3,
             MT-NLG, PaLM, Gemma, small Qwen, BERT).
Attention    q: hidden x heads x head_dim; k and v: hidden x kv_heads x
             head_dim each (GQA/MQA); o: heads x head_dim x hidden.
             head_dim defaults to hidden / heads, kv_heads to heads.
             `positions = relative` (Transformer-XL style, Gopher/Chinchilla)
             adds a hidden x heads x head_dim projection of the relative
             position encodings per layer.
             MLA (DeepSeek, fields mla.*): q down hidden x q_rank, q norm,
             q up q_rank x heads x (head_dim + rope_dim); kv down hidden x
             (kv_rank + rope_dim), kv norm, kv up kv_rank x heads x
             (head_dim + v_head_dim); o heads x v_head_dim x hidden.
FFN          `ffn_kind = gated` (SwiGLU/GeGLU: Llama, Mistral, Qwen, Gemma,
             DeepSeek, PaLM) is 3 x hidden x ffn; `plain` (GELU: GPT-2/3,
             MT-NLG, BERT, ViT, Chinchilla, PanGu) is 2 x hidden x ffn. When
             ffn_kind is absent: plain if `bias = true`, else gated.
MoE          experts x FFN(moe_ffn) + shared_experts x FFN(moe_ffn) + a router
             hidden x experts in each MoE layer; moe_ffn defaults to ffn. The
             first `dense_layers` layers (DeepSeek-V3: 3; PanGu-Sigma: 32) have
             a dense FFN of size ffn instead. PanGu-Sigma's random routing has
             no learned router; counting one adds under 0.01%.
Biases       `bias = true`: biases on q/k/v/o and both FFN matrices, and
             LayerNorm with a bias (2 x hidden per norm); otherwise RMSNorm
             (hidden per norm) and no biases. Small biases of otherwise
             bias-free models (Qwen2.5's q/k/v biases, Qwen3's per-head q/k
             norms, Gemma 2's extra norms) are ignored: under 0.1%.
Norms        two per layer and one final norm.
Active       active_params counts both the token table and the output head,
             attention, dense layers, and top_k + shared experts per MoE
             layer. Vendors differ on the input embedding (DeepSeek excludes
             it), hence the wider 5% tolerance.
Not counted  DeepSeek-V3's multi-token-prediction module (14B, reported
             separately from the 671B); PanGu-alpha's extra top query layer.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

PARAMS_TOLERANCE = 0.02
ACTIVE_TOLERANCE = 0.05

HEADER = re.compile(r"^(\w+) (\w+)(?: : \w+)? @")
FIELD = re.compile(r"^    ([\w.]+) : (\S+) = (.*?)(?:   <-.*)?$")


def parse_ir(text):
    """Returns {name: {field: value}} for the models in an IR dump."""
    models, current = {}, None
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            current = None
            if header.group(1) == "model":
                current = models.setdefault(header.group(2), {})
            continue
        field = FIELD.match(line)
        if current is None or not field:
            continue
        path, typ, value = field.groups()
        value = value.strip()
        if typ == "bool":
            current[path] = value == "true"
        elif typ == "symbol":
            current[path] = value
        elif typ.startswith("["):
            current[path] = float(value.split()[0])
    return models


def count(m):
    """Returns (total, active) parameters recomputed from the fields."""
    L = m["layers"]
    d = m["hidden"]
    H = m["heads"]
    kv = m.get("kv_heads", H)
    hd = m.get("head_dim", d / H)
    V = m.get("vocab", 0)
    bias = m.get("bias", False)
    kind = m.get("ffn_kind", "plain" if bias else "gated")
    mult = 3 if kind == "gated" else 2
    positions = m.get("positions")
    family = m.get("family")

    # Embeddings and head.
    emb = V * d
    head = 0.0
    extra = 0.0
    if "patch" in m:
        p = m["patch"]
        tokens = (m["image"] / p) ** 2 + 1
        emb += 3 * p * p * d + d + d + tokens * d
        classes = m.get("classes", 0)
        head = classes * d + classes
    else:
        if positions == "learned":
            emb += m["context"] * d
        if family == "encoder" and V:
            emb += 2 * d + 2 * d
            extra += d * d + d  # pooler
        if V and not m.get("tied_embeddings", False):
            head = V * d

    # Attention per layer.
    if "mla.kv_rank" in m:
        qr = m["mla.q_rank"]
        kvr = m["mla.kv_rank"]
        rope = m["mla.rope_dim"]
        vhd = m["mla.v_head_dim"]
        attn = (d * qr + qr + qr * H * (hd + rope)
                + d * (kvr + rope) + kvr + kvr * H * (hd + vhd)
                + H * vhd * d)
    else:
        attn = d * H * hd + 2 * d * kv * hd + H * hd * d
        if bias:
            attn += H * hd + 2 * kv * hd + d
    if positions == "relative":
        attn += d * H * hd
    norms = (4 if bias else 2) * d
    final_norm = (2 if bias else 1) * d

    # Feed-forward.
    F = m.get("ffn", 0)
    dense_ffn = mult * d * F + ((F + d) if bias else 0)
    experts = m.get("experts", 0)
    if experts:
        Fe = m.get("moe_ffn", F)
        one = mult * d * Fe + ((Fe + d) if bias else 0)
        shared = m.get("shared_experts", 0)
        top_k = m.get("top_k", 1)
        moe_layers = L - m.get("dense_layers", 0)
        moe_total = (experts + shared) * one + d * experts
        moe_active = (top_k + shared) * one + d * experts
    else:
        moe_layers, moe_total, moe_active = 0, 0.0, 0.0

    common = (emb + head + extra + final_norm + L * (attn + norms)
              + (L - moe_layers) * dense_ffn)
    return common + moe_layers * moe_total, common + moe_layers * moe_active


def find_mlsc(explicit):
    if explicit:
        return explicit
    found = shutil.which("mlsc")
    if not found:
        sys.exit("check-model-params: no mlsc on PATH; pass --mlsc")
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="source root holding registries/models")
    ap.add_argument("--mlsc", help="the mlsc binary (default: on PATH)")
    ap.add_argument("--verbose", action="store_true",
                    help="print every model, not only failures")
    args = ap.parse_args()
    mlsc = find_mlsc(args.mlsc)

    files = sorted(glob.glob(os.path.join(args.src, "registries", "models",
                                          "*.mls")))
    if not files:
        sys.exit(f"check-model-params: no registries/models/*.mls under "
                 f"{args.src}")
    checked, failures = 0, []
    for path in files:
        run = subprocess.run([mlsc, "--emit=ir", "--data-dir", args.src,
                              path], capture_output=True, text=True)
        if run.returncode != 0 or run.stderr.strip():
            failures.append(f"{path}: mlsc failed:\n{run.stderr.strip()}")
            continue
        for name, m in parse_ir(run.stdout).items():
            if not all(k in m for k in ("layers", "hidden", "heads")):
                continue
            checked += 1
            total, active = count(m)
            err = total / m["params"] - 1
            line = (f"{os.path.basename(path)}: {name}: params "
                    f"{m['params']:.4g}, recomputed {total:.4g} "
                    f"({err:+.2%})")
            bad = abs(err) > PARAMS_TOLERANCE
            if "active_params" in m:
                aerr = active / m["active_params"] - 1
                line += (f"; active {m['active_params']:.4g}, recomputed "
                         f"{active:.4g} ({aerr:+.2%})")
                bad = bad or abs(aerr) > ACTIVE_TOLERANCE
            if bad:
                failures.append("MISMATCH " + line)
            elif args.verbose:
                print("ok " + line)
    for f in failures:
        print(f)
    print(f"{checked - len([f for f in failures if f.startswith('MISMATCH')])}"
          f" passed, {len(failures)} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
