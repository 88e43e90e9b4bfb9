"""Triton's config.pbtxt for a collage artifact, from the inputs and outputs it declares."""
import numpy as np

_TYPES = {
    np.dtype(np.bool_): "TYPE_BOOL", np.dtype(np.uint8): "TYPE_UINT8",
    np.dtype(np.uint16): "TYPE_UINT16", np.dtype(np.uint32): "TYPE_UINT32",
    np.dtype(np.uint64): "TYPE_UINT64", np.dtype(np.int8): "TYPE_INT8",
    np.dtype(np.int16): "TYPE_INT16", np.dtype(np.int32): "TYPE_INT32",
    np.dtype(np.int64): "TYPE_INT64", np.dtype(np.float16): "TYPE_FP16",
    np.dtype(np.float32): "TYPE_FP32", np.dtype(np.float64): "TYPE_FP64",
}


def triton_type(dtype):
    """Triton's data type of a numpy dtype; ValueError for one Triton cannot carry."""
    try:
        return _TYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise ValueError(f"no Triton data type for {dtype}") from None


def _tensors(kind, infos, batched):
    entries = []
    for t in infos:
        dims = t.shape[1:] if batched else t.shape
        entries.append(f'  {{ name: "{t.name}" data_type: {triton_type(t.dtype)} '
                       f'dims: [ {", ".join(str(d) for d in dims)} ] }}')
    return f"{kind} [\n" + ",\n".join(entries) + "\n]\n"


def max_batch_size(inputs, outputs, batch_range):
    """Triton's max_batch_size for an artifact: the largest batch of its BATCH_RANGE (a module's
    batch_range, None: 0, no batching). Triton's batch is the first dimension of every input
    and output, and its dynamic batcher sends any batch from 1: ValueError for an artifact whose
    range starts above 1 or whose tensors are not all batched on their first axis."""
    if batch_range is None:
        return 0
    low, high = batch_range
    if low != 1:
        raise ValueError(f"the artifact's batch range {low}..{high} does not start at 1, the "
                         f"smallest batch Triton's dynamic batcher sends: compile it for "
                         f"1..{high}")
    for t in list(inputs) + list(outputs):
        if t.batch_axis != 0:
            where = "no batch axis" if t.batch_axis is None else f"batch axis {t.batch_axis}"
            raise ValueError(f"{t.name} has {where}; Triton batches every input and output on "
                             f"its first dimension")
    return high


def config_pbtxt(name, inputs, outputs, batch_range=None, instances=1, queue_delay_us=100,
                 parameters=None):
    """The config.pbtxt of model NAME for the Python backend. INPUTS, OUTPUTS: collage
    TensorInfo lists (name, dtype, shape, batch_axis). BATCH_RANGE: the artifact's (a module's
    batch_range): max_batch_size is its largest batch, Triton's dims leave the batch out, and
    the dynamic batcher gathers requests up to that batch, waiting at most QUEUE_DELAY_US;
    None: max_batch_size 0 and the full shapes. INSTANCES: CPU instances (processes).
    PARAMETERS: string parameters model.py reads (artifact, num_threads)."""
    batch = max_batch_size(inputs, outputs, batch_range)
    text = f'name: "{name}"\nbackend: "python"\nmax_batch_size: {batch}\n'
    text += _tensors("input", inputs, batch)
    text += _tensors("output", outputs, batch)
    if batch:
        text += f"dynamic_batching {{ max_queue_delay_microseconds: {queue_delay_us} }}\n"
    text += f"instance_group [ {{ kind: KIND_CPU count: {instances} }} ]\n"
    for key, value in sorted((parameters or {}).items()):
        text += f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n'
    return text
