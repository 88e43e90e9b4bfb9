"""Serving collage artifacts with Triton Inference Server (its Python backend).

A model repository entry is a folder NAME/ with config.pbtxt (inputs and outputs taken from the
artifact, dynamic batching where it holds a batch range) and 1/model.py (this package's model.py,
which loads 1/model.collage with collage.load) beside the artifact:

    python -m collage.triton build-repo model.onnx repo/ --name resnet --max-batch 8
    python -m collage.triton serve repo/ --http-port 8000 --grpc-port 8001

`serve` runs the tritonserver of the nvidia-pytriton wheel (pip install nvidia-pytriton) with
this environment's Python for the models.
"""
