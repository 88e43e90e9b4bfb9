"""The collage package with PyTorch (run by test_wheel.py in Debian's Python): torch tensors
are run in place through DLPack and the outputs come back to torch without a copy.

    check_torch.py CAPI_DATA_DIR     (mlp.onnx, input.npy, expected.npy)
"""
import os
import sys

import numpy as np
import torch

import collage

data = sys.argv[1]
module = collage.load(collage.compile(os.path.join(data, "mlp.onnx"), placement="single:eigen"))
x = torch.from_numpy(np.load(os.path.join(data, "input.npy")))
expected = np.load(os.path.join(data, "expected.npy"))

(y,) = module.run(x)
t = torch.from_dlpack(y)
assert t.data_ptr() == y.ctypes.data, "torch.from_dlpack copied the output"
np.testing.assert_allclose(t.numpy(), expected, rtol=1e-5, atol=1e-6)

# Outputs written into torch tensors the caller owns.
out = torch.empty(tuple(module.outputs[0].shape))
module.run(x, out=[out])
np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)

# A strided view is not contiguous: torch makes it so (the one case with a copy).
wide = torch.zeros(x.shape[0], 2 * x.shape[1])
wide[:, ::2] = x
assert not wide[:, ::2].is_contiguous()
(z,) = module.run(wide[:, ::2])
np.testing.assert_allclose(z, expected, rtol=1e-5, atol=1e-6)

try:
    module.run(x.double())
    raise AssertionError("a float64 tensor was accepted")
except collage.InvalidArgumentError as e:
    assert "input 0 'x'" in e.message, e.message
print(f"torch {torch.__version__}, numpy {np.__version__}: DLPack both ways")
