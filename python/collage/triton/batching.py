"""Requests gathered into one batch and the batch's outputs handed back, for Triton models whose
artifact runs a range of batches: the requests' inputs are concatenated along the batch axis
(the first) and run as they are, whatever their total (the runtime runs the plan compiled for
that batch, or the next larger one), and the outputs are split into each request's rows."""
import numpy as np


def gather(per_request, max_batch):
    """PER_REQUEST: for each request, its list of input arrays (first dimension: its rows).
    Returns (the inputs of all the requests' rows, rows per request). ValueError when the rows
    exceed MAX_BATCH (Triton's dynamic batcher never sends more than max_batch_size)."""
    counts = [len(arrays[0]) if arrays else 0 for arrays in per_request]
    total = sum(counts)
    if total > max_batch:
        raise ValueError(f"{total} rows in {len(per_request)} requests exceed the largest batch, "
                         f"{max_batch}")
    inputs = []
    for i in range(len(per_request[0])):
        parts = [arrays[i] for arrays in per_request]
        inputs.append(np.concatenate(parts) if len(parts) > 1 else parts[0])
    return inputs, counts


def scatter(outputs, counts):
    """The rows of each request: for each request, its slice of every output (views)."""
    result, start = [], 0
    for n in counts:
        result.append([out[start:start + n] for out in outputs])
        start += n
    return result
