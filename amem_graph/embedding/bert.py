"""The ONNX graph of a BERT sentence model (Transformer → mean or [CLS] pooling → normalise), written from the
model's weights (its safetensors, or an ONNX export's initialisers) with no torch: ONNX Runtime's fused transformer operators (embedding + layer norm, attention,
skip + layer norm, bias + GELU), the form its BERT optimiser gives a torch export, so the int8 copy quantises the
same matrices the same way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ENCODER_ARCHITECTURES = {"BertModel", "BertForMaskedLM", "BertForPreTraining"}


class GraphUnsupported(Exception):
    """The model's files are not a BERT encoder that this graph computes."""


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
    """The graph of the sentence-transformers model in `folder` (mean pooling) into `target`."""
    from safetensors.numpy import load_file

    if why := buildable(folder):
        raise GraphUnsupported(why)
    config = json.loads((folder / "config.json").read_text())
    weights = {name.removeprefix("bert."): value for name, value in load_file(str(folder / "model.safetensors")).items()}
    build(weights, target, heads=int(config["num_attention_heads"]), epsilon=float(config.get("layer_norm_eps", 1e-12)),
          pooling="mean")


def weights_of_export(path: Path) -> dict[str, np.ndarray]:
    """A BERT's weights by their torch names, read from an ONNX export of it (as the model hub's ONNX copies are
    written): each projection's matrix is the MatMul that its named bias is added to, stored (in, out)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    stored = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    weights = {name.removeprefix("bert."): value for name, value in stored.items() if not name.startswith("onnx::")}
    adds_of: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        if node.op_type == "Add":
            for name in node.input:
                adds_of.setdefault(name, []).append(node)
    for node in graph.node:
        matrix = next((name for name in node.input if name in stored), None) if node.op_type == "MatMul" else None
        if matrix is None:
            continue
        biases = {name for add in adds_of.get(node.output[0], []) for name in add.input
                  if name in stored and name.endswith(".bias")}
        if len(biases) != 1:
            raise GraphUnsupported(f"{path.name}: the MatMul {node.name!r} has no single named bias")
        weights[biases.pop().removeprefix("bert.").removesuffix(".bias") + ".weight"] = stored[matrix].T
    return weights


def build(weights: dict[str, np.ndarray], target: Path, *, heads: int, pooling: str, epsilon: float = 1e-12) -> None:
    """The fused graph of a BERT encoder from its weights (torch names: Linear matrices stored (out, in)), pooled
    over the tokens (`mean`) or taken at the first token (`cls`), then normalised."""
    import onnx
    from onnx import TensorProto, helper

    if pooling not in ("mean", "cls"):
        raise GraphUnsupported(f"pooling {pooling!r} (the graph computes mean and cls)")
    layers = 1 + max((int(name.split(".")[2]) for name in weights if name.startswith("encoder.layer.")), default=-1)
    hidden_size = int(weights["embeddings.word_embeddings.weight"].shape[1])
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
    for layer in range(layers):
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
    last = f"hidden.{layers}"
    nodes += _pooled(last, pooling, constant)
    nodes += [
        helper.make_node("ReduceL2", ["pooled"], ["norm"], axes=[-1], keepdims=1),  # axes an attribute until opset 18
        helper.make_node("Clip", ["norm", constant("min_norm", np.array(1e-12, np.float32))], ["norm_safe"]),
        helper.make_node("Div", ["pooled", "norm_safe"], ["embedding"]),
    ]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden_size])
    graph = helper.make_graph(nodes, "sentence_embedding", inputs, [output], initializer=tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="amem-graph")
    onnx.save_model(model, str(target))


def _pooled(last: str, pooling: str, constant) -> list:
    """Nodes that give `pooled` (batch × hidden) from the last layer: the first token's state ([CLS]), or
    sentence-transformers' mean over the tokens the mask keeps."""
    from onnx import TensorProto, helper

    if pooling == "cls":
        return [
            helper.make_node("Gather", [last, constant("first_token", np.array([0], np.int64))], ["first"], axis=1),
            helper.make_node("Squeeze", ["first", constant("token_axis", np.array([1], np.int64))], ["pooled"]),
        ]
    return [
        helper.make_node("Cast", ["attention_mask"], ["kept"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["kept", constant("last_axis", np.array([-1], np.int64))], ["kept3"]),
        helper.make_node("Mul", [last, "kept3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", constant("token_axis", np.array([1], np.int64))], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["kept3", "token_axis"], ["counts"], keepdims=0),
        helper.make_node("Clip", ["counts", constant("min_count", np.array(1e-9, np.float32))], ["counts_safe"]),
        helper.make_node("Div", ["summed", "counts_safe"], ["pooled"]),
    ]
