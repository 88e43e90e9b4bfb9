"""Requests gathered into one batch and the batch's outputs handed back, for Triton models whose
engine runs one fixed batch (a collage artifact is compiled for one): the requests' inputs are
concatenated along the first dimension and padded to the batch with zeros, the outputs split."""
import numpy as np


def gather(per_request, batch):
    """PER_REQUEST: for each request, its list of input arrays (first dimension: its rows).
    Returns (inputs of BATCH rows each, rows per request). ValueError when the rows exceed
    BATCH (Triton's dynamic batcher never sends more than max_batch_size)."""
    counts = [len(arrays[0]) if arrays else 0 for arrays in per_request]
    total = sum(counts)
    if total > batch:
        raise ValueError(f"{total} rows in {len(per_request)} requests exceed the batch of "
                         f"{batch}")
    inputs = []
    for i in range(len(per_request[0])):
        parts = [arrays[i] for arrays in per_request]
        if total < batch:
            pad = np.zeros((batch - total,) + parts[0].shape[1:], parts[0].dtype)
            parts.append(pad)
        inputs.append(np.concatenate(parts) if len(parts) > 1 else parts[0])
    return inputs, counts


def scatter(outputs, counts):
    """The rows of each request: for each request, its slice of every output (views)."""
    result, start = [], 0
    for n in counts:
        result.append([out[start:start + n] for out in outputs])
        start += n
    return result
