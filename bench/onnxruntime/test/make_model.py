#!/usr/bin/python3
"""Writes a small ONNX test model for ort-run.js (opset 17, IR version 8).

Graph inputs, in order:
  X: float32 [1, 3, 8, 8]
  A: float32 [4, 32]
Graph outputs, in order:
  Y:  Relu(Conv(X, W, B)), 3x3 kernel, pads 1, stride 1 -> [1, 8, 8, 8]
  Z:  MatMul(A, M)                                      -> [4, 16]
W [8,3,3,3], B [8] and M [32,16] are initializers drawn from numpy's
default_rng(SEED); they are also written to OUT.npz so a checker can recompute
the outputs with numpy.

Usage: /usr/bin/python3 make_model.py OUT.onnx  (needs onnx and numpy)
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 1234


def main():
    if len(sys.argv) != 2 or not sys.argv[1].endswith(".onnx"):
        sys.exit("usage: make_model.py OUT.onnx")
    out = sys.argv[1]
    rng = np.random.default_rng(SEED)
    w = rng.uniform(-0.5, 0.5, (8, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (8,)).astype(np.float32)
    m = rng.uniform(-0.5, 0.5, (32, 16)).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["X", "W", "B"], ["C"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["C"], ["Y"]),
        helper.make_node("MatMul", ["A", "M"], ["Z"]),
    ]
    graph = helper.make_graph(
        nodes, "kiln_ort_test",
        inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8]),
                helper.make_tensor_value_info("A", TensorProto.FLOAT, [4, 32])],
        outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 8, 8, 8]),
                 helper.make_tensor_value_info("Z", TensorProto.FLOAT, [4, 16])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
                     numpy_helper.from_array(m, "M")])
    model = helper.make_model(graph, producer_name="kiln-bench",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    np.savez(out[:-len(".onnx")] + ".npz", W=w, B=b, M=m)


if __name__ == "__main__":
    main()
