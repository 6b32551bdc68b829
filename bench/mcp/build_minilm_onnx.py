"""Build chromadb's all-MiniLM-L6-v2 ONNX model from safetensors, without torch.

usage: python build_minilm_onnx.py <hf_model_dir> <out_onnx_dir>

Writes <out_onnx_dir>/model.onnx (fp32 BertModel, inputs input_ids /
attention_mask / token_type_ids [batch, seq] int64, output last_hidden_state
[batch, seq, 384]) and copies the five tokenizer/config files chromadb's
ONNXMiniLM_L6_V2._download_model_if_not_exists() checks for.
"""

import json
import os
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

# --- read safetensors with plain numpy -------------------------------------
with open(os.path.join(src, "model.safetensors"), "rb") as f:
    hlen = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(hlen))
    blob = f.read()
DT = {"F32": np.float32, "I64": np.int64}
W = {}
for name, info in header.items():
    if name == "__metadata__":
        continue
    a, b = info["data_offsets"]
    W[name] = np.frombuffer(blob[a:b], dtype=DT[info["dtype"]]).reshape(info["shape"])

cfg = json.load(open(os.path.join(src, "config.json")))
H = cfg["hidden_size"]
NH = cfg["num_attention_heads"]
HD = H // NH
L = cfg["num_hidden_layers"]
EPS = cfg["layer_norm_eps"]

inits = []
nodes = []


def init(name, arr):
    inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
    return name


_n = [0]


def node(op, inputs, **attrs):
    _n[0] += 1
    o = f"t{_n[0]}"
    nodes.append(helper.make_node(op, inputs, [o], **attrs))
    return o


def linear(x, prefix):
    # torch Linear: y = x @ W.T + b
    w = init(prefix + ".weight_T", W[prefix + ".weight"].T)
    b = init(prefix + ".bias", W[prefix + ".bias"])
    return node("Add", [node("MatMul", [x, w]), b])


def layernorm(x, prefix):
    g = init(prefix + ".weight", W[prefix + ".weight"])
    b = init(prefix + ".bias", W[prefix + ".bias"])
    return node("LayerNormalization", [x, g, b], axis=-1, epsilon=EPS)


# constants
c0 = init("c_i0", np.array(0, np.int64))
c1 = init("c_i1", np.array(1, np.int64))
c_one = init("c_f1", np.array(1.0, np.float32))
c_neg = init("c_neg", np.array(-10000.0, np.float32))
c_scale = init("c_scale", np.array(1.0 / np.sqrt(HD), np.float32))
c_half = init("c_half", np.array(0.5, np.float32))
c_rsqrt2 = init("c_rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
shp_heads = init("shp_heads", np.array([0, 0, NH, HD], np.int64))
shp_merge = init("shp_merge", np.array([0, 0, H], np.int64))
ax12 = init("ax12", np.array([1, 2], np.int64))

# embeddings
word = node("Gather", [init("word_emb", W["embeddings.word_embeddings.weight"]), "input_ids"])
# position ids 0..S-1 per row: CumSum(ones_like(input_ids), axis=1) - 1
# (avoids Shape->Gather->Range, which ORT's optimizer mis-rewrote into a Slice)
ones = node("Add", [node("Mul", ["input_ids", c0]), c1])
pos_ids = node("Sub", [node("CumSum", [ones, c1]), c1])
pos = node("Gather", [init("pos_emb", W["embeddings.position_embeddings.weight"]), pos_ids])
tt = node("Gather", [init("tt_emb", W["embeddings.token_type_embeddings.weight"]), "token_type_ids"])
x = layernorm(node("Add", [node("Add", [word, pos]), tt]), "embeddings.LayerNorm")

# additive attention mask [B,1,1,S]
maskf = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
mask_bias = node("Unsqueeze", [node("Mul", [node("Sub", [c_one, maskf]), c_neg]), ax12])

for i in range(L):
    p = f"encoder.layer.{i}"
    q = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.query"), shp_heads])], perm=[0, 2, 1, 3])
    k = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.key"), shp_heads])], perm=[0, 2, 3, 1])
    v = node("Transpose", [node("Reshape", [linear(x, p + ".attention.self.value"), shp_heads])], perm=[0, 2, 1, 3])
    scores = node("Add", [node("Mul", [node("MatMul", [q, k]), c_scale]), mask_bias])
    probs = node("Softmax", [scores], axis=-1)
    ctx = node("Reshape", [node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3]), shp_merge])
    x = layernorm(node("Add", [linear(ctx, p + ".attention.output.dense"), x]), p + ".attention.output.LayerNorm")
    h = linear(x, p + ".intermediate.dense")
    # exact (erf) GELU, as HF "gelu"
    h = node("Mul", [node("Mul", [h, c_half]), node("Add", [node("Erf", [node("Mul", [h, c_rsqrt2])]), c_one])])
    x = layernorm(node("Add", [linear(h, p + ".output.dense"), x]), p + ".output.LayerNorm")

nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

ins = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask", "token_type_ids")]
outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", H])]
graph = helper.make_graph(nodes, "minilm_l6_v2", ins, outs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="mp311-offline")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))

for fn in ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json", "vocab.txt"):
    shutil.copy(os.path.join(src, fn), os.path.join(out, fn))
print("wrote", out)
