"""A Triton Python-backend model that runs an ONNX model (1/model.onnx) with ONNX Runtime: the
peer of the serving bench, served beside the collage model of the same ONNX file, one request
at a time, with the config's "num_threads" intra-op threads."""
import json
import os

import onnxruntime as ort
import triton_python_backend_utils as pb_utils


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

    def execute(self, requests):
        responses = []
        for r in requests:
            feeds = {n: pb_utils.get_input_tensor_by_name(r, n).as_numpy() for n in self.inputs}
            outputs = self.session.run(None, feeds)
            responses.append(pb_utils.InferenceResponse(
                [pb_utils.Tensor(n, o) for n, o in zip(self.outputs, outputs)]))
        return responses
