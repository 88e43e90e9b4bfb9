"""A Triton Python-backend model that runs an ONNX model (1/model.onnx) with ONNX Runtime: the
peer of the serving bench, served beside the collage model of the same ONNX file, with the
config's "num_threads" intra-op threads. Without max_batch_size one request runs at a time; with
it (the dynamic-batching variant, a model with a symbolic batch), the requests Triton gathers run
as one batch, as the collage model.py runs them (collage.triton.batching)."""
import json
import os

import onnxruntime as ort
import triton_python_backend_utils as pb_utils

from collage.triton.batching import gather, scatter


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        folder = os.path.join(args["model_repository"], args["model_version"])
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(
            config["parameters"]["num_threads"]["string_value"])
        self.session = ort.InferenceSession(os.path.join(folder, "model.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]
        self.max_batch = int(config.get("max_batch_size", 0))

    def _response(self, outputs):
        return pb_utils.InferenceResponse(
            [pb_utils.Tensor(n, o) for n, o in zip(self.outputs, outputs)])

    def execute(self, requests):
        per_request = [[pb_utils.get_input_tensor_by_name(r, n).as_numpy() for n in self.inputs]
                       for r in requests]
        if not self.max_batch:
            return [self._response(self.session.run(None, dict(zip(self.inputs, arrays))))
                    for arrays in per_request]
        inputs, counts = gather(per_request, self.max_batch)
        outputs = self.session.run(None, dict(zip(self.inputs, inputs)))
        return [self._response(parts) for parts in scatter(outputs, counts)]
