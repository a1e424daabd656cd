"""The ONNX graph of a BERT sentence model (Transformer → mean pooling → normalise), written from the model's
safetensors with no torch: ONNX Runtime's fused transformer operators (embedding + layer norm, attention,
skip + layer norm, bias + GELU), the form its BERT optimiser gives a torch export, so the int8 copy quantises the
same matrices the same way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ENCODER_ARCHITECTURES = {"BertModel", "BertForMaskedLM", "BertForPreTraining"}


class GraphUnsupported(Exception):
    """The model's files are not a BERT encoder in safetensors that this graph computes."""


def buildable(folder: Path) -> str | None:
    """None when the graph can be written from the folder's files, else why not."""
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return "no readable config.json"
    if config.get("model_type") != "bert":
        return f"model type {config.get('model_type')!r} (the graph is written for BERT encoders)"
    if config.get("position_embedding_type", "absolute") != "absolute" or config.get("hidden_act") != "gelu":
        return "a BERT variant (relative positions or another activation) the graph does not compute"
    if not (folder / "model.safetensors").is_file():
        return "no model.safetensors (weights in another format need torch)"
    return None


def write(folder: Path, target: Path) -> None:
    """The graph of the model in `folder` into `target`: inputs input_ids, attention_mask, token_type_ids (int64,
    batch × tokens, padding on the right), output `embedding` (batch × hidden, unit length)."""
    import onnx
    from onnx import TensorProto, helper
    from safetensors.numpy import load_file

    if why := buildable(folder):
        raise GraphUnsupported(why)
    config = json.loads((folder / "config.json").read_text())
    weights = {name.removeprefix("bert."): value for name, value in load_file(str(folder / "model.safetensors")).items()}
    epsilon = float(config.get("layer_norm_eps", 1e-12))
    heads = int(config["num_attention_heads"])
    tensors: list[onnx.TensorProto] = []

    def constant(name: str, value: np.ndarray) -> str:
        tensors.append(onnx.numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(name: str) -> str:
        return constant(name, weights[name].astype(np.float32))

    def linear(name: str) -> str:  # torch's Linear stores (out, in); MatMul takes (in, out)
        return constant(f"{name}.weight.T", weights[f"{name}.weight"].T.astype(np.float32))

    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids"], to=TensorProto.INT32),
        helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.INT32),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.INT32),
        helper.make_node(
            "EmbedLayerNormalization",
            ["ids", "types", weight("embeddings.word_embeddings.weight"), weight("embeddings.position_embeddings.weight"),
             weight("embeddings.token_type_embeddings.weight"), weight("embeddings.LayerNorm.weight"),
             weight("embeddings.LayerNorm.bias"), "mask"],
            ["hidden.0", "lengths"], domain="com.microsoft", epsilon=epsilon),
    ]
    for layer in range(int(config["num_hidden_layers"])):
        at, hidden = f"encoder.layer.{layer}", f"hidden.{layer}"
        parts = [f"{at}.attention.self.{part}" for part in ("query", "key", "value")]
        qkv = constant(f"{at}.attention.qkv.weight", np.concatenate([weights[f"{p}.weight"].T for p in parts], axis=1))
        qkv_bias = constant(f"{at}.attention.qkv.bias", np.concatenate([weights[f"{p}.bias"] for p in parts]))
        nodes += [
            helper.make_node("Attention", [hidden, qkv, qkv_bias, "lengths"], [f"{at}.context"],
                             domain="com.microsoft", num_heads=heads),
            helper.make_node("MatMul", [f"{at}.context", linear(f"{at}.attention.output.dense")], [f"{at}.attended"]),
            helper.make_node(
                "SkipLayerNormalization",
                [f"{at}.attended", hidden, weight(f"{at}.attention.output.LayerNorm.weight"),
                 weight(f"{at}.attention.output.LayerNorm.bias"), weight(f"{at}.attention.output.dense.bias")],
                [f"{at}.normed"], domain="com.microsoft", epsilon=epsilon),
            helper.make_node("MatMul", [f"{at}.normed", linear(f"{at}.intermediate.dense")], [f"{at}.widened"]),
            helper.make_node("BiasGelu", [f"{at}.widened", weight(f"{at}.intermediate.dense.bias")], [f"{at}.gelu"],
                             domain="com.microsoft"),
            helper.make_node("MatMul", [f"{at}.gelu", linear(f"{at}.output.dense")], [f"{at}.out"]),
            helper.make_node(
                "SkipLayerNormalization",
                [f"{at}.out", f"{at}.normed", weight(f"{at}.output.LayerNorm.weight"),
                 weight(f"{at}.output.LayerNorm.bias"), weight(f"{at}.output.dense.bias")],
                [f"hidden.{layer + 1}"], domain="com.microsoft", epsilon=epsilon),
        ]
    last = f"hidden.{int(config['num_hidden_layers'])}"
    # sentence-transformers' mean pooling over the tokens the mask keeps, then L2 normalisation.
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["kept"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["kept", constant("last_axis", np.array([-1], np.int64))], ["kept3"]),
        helper.make_node("Mul", [last, "kept3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", constant("token_axis", np.array([1], np.int64))], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["kept3", "token_axis"], ["counts"], keepdims=0),
        helper.make_node("Clip", ["counts", constant("min_count", np.array(1e-9, np.float32))], ["counts_safe"]),
        helper.make_node("Div", ["summed", "counts_safe"], ["pooled"]),
        helper.make_node("ReduceL2", ["pooled"], ["norm"], axes=[-1], keepdims=1),  # axes an attribute until opset 18
        helper.make_node("Clip", ["norm", constant("min_norm", np.array(1e-12, np.float32))], ["norm_safe"]),
        helper.make_node("Div", ["pooled", "norm_safe"], ["embedding"]),
    ]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", int(config["hidden_size"])])
    graph = helper.make_graph(nodes, "sentence_embedding", inputs, [output], initializer=tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="amem-graph")
    onnx.save_model(model, str(target))
