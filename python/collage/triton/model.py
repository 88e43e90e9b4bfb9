"""A Triton Inference Server model (Python backend) that runs a collage artifact.

build-repo puts this file in NAME/1/model.py beside the artifact (NAME/1/model.collage, or the
file the config's "artifact" parameter names). config.pbtxt declares the artifact's inputs and
outputs; with max_batch_size > 0 (the largest batch of the artifact's batch range), Triton's
dynamic batcher gathers requests, whose rows are run at once, as one batch of their total (the
runtime runs the plan compiled for it), and split back. An artifact that is
missing or fails its checks makes the model UNAVAILABLE, as Triton reports a model that fails to
load: clients read the reason (collage's message, naming the file and the fault) in the
repository index (HTTP POST /v2/repository/index, gRPC RepositoryIndex), requests to it are
refused, and the server's other models serve on.
"""
import json
import os

import triton_python_backend_utils as pb_utils

import collage
from collage.triton.batching import gather, scatter


def _parameter(config, key, default):
    return config.get("parameters", {}).get(key, {}).get("string_value", default)


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        folder = os.path.join(args["model_repository"], args["model_version"])
        path = os.path.join(folder, _parameter(config, "artifact", "model.collage"))
        try:
            self.module = collage.load(path, num_threads=int(_parameter(config, "num_threads", 0)))
        except collage.Error as e:
            # The message names the artifact's path and what is wrong with it.
            raise pb_utils.TritonModelException(f"collage: {e}") from None
        self.max_batch = int(config.get("max_batch_size", 0))
        if self.max_batch and (self.module.batch_range is None or
                               self.module.batch_range[1] < self.max_batch):
            raise pb_utils.TritonModelException(
                f"collage artifact {path}: config.pbtxt's max_batch_size {self.max_batch} "
                f"exceeds the artifact's batch range "
                f"{self.module.batch_range or 'none (a fixed batch)'}")
        declared = [t["name"] for t in config["input"]], [t["name"] for t in config["output"]]
        actual = [t.name for t in self.module.inputs], [t.name for t in self.module.outputs]
        if declared != actual:
            raise pb_utils.TritonModelException(
                f"collage artifact {path}: inputs and outputs {actual} do not match "
                f"config.pbtxt's {declared}")

    def execute(self, requests):
        per_request = [[pb_utils.get_input_tensor_by_name(r, t.name).as_numpy()
                        for t in self.module.inputs] for r in requests]
        if not self.max_batch:
            responses = []
            for arrays in per_request:
                try:
                    responses.append(self._response(self.module.run(*arrays)))
                except (collage.Error, ValueError) as e:
                    responses.append(self._response(error=e))
            return responses
        try:
            inputs, counts = gather(per_request, self.max_batch)
            results = scatter(self.module.run(*inputs), counts)
        except (collage.Error, ValueError) as e:
            return [self._response(error=e) for _ in requests]
        return [self._response(outputs) for outputs in results]

    def _response(self, outputs=None, error=None):
        if error is not None:
            return pb_utils.InferenceResponse(output_tensors=[],
                                              error=pb_utils.TritonError(str(error)))
        return pb_utils.InferenceResponse(output_tensors=[
            pb_utils.Tensor(t.name, a) for t, a in zip(self.module.outputs, outputs)])

    def finalize(self):
        module = getattr(self, "module", None)
        if module is not None:
            module.close()
