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


def _tensors(kind, infos, max_batch_size):
    entries = []
    for t in infos:
        dims = t.shape[1:] if max_batch_size else t.shape
        entries.append(f'  {{ name: "{t.name}" data_type: {triton_type(t.dtype)} '
                       f'dims: [ {", ".join(str(d) for d in dims)} ] }}')
    return f"{kind} [\n" + ",\n".join(entries) + "\n]\n"


def batch_of(inputs, outputs):
    """The batch an artifact was compiled for when every input and output has it as its first
    dimension; 0 otherwise (the model cannot be batched by Triton)."""
    tensors = list(inputs) + list(outputs)
    if not tensors or any(len(t.shape) == 0 for t in tensors):
        return 0
    first = {t.shape[0] for t in tensors}
    return first.pop() if len(first) == 1 else 0


def config_pbtxt(name, inputs, outputs, max_batch_size=0, instances=1, queue_delay_us=100,
                 parameters=None):
    """The config.pbtxt of model NAME for the Python backend. INPUTS, OUTPUTS: collage
    TensorInfo lists (name, dtype, shape). With MAX_BATCH_SIZE > 0 the first dimension of every
    tensor is the batch: Triton's dims leave it out and the dynamic batcher gathers requests up
    to that batch, waiting at most QUEUE_DELAY_US. INSTANCES: CPU instances (processes).
    PARAMETERS: string parameters model.py reads (artifact, num_threads)."""
    if max_batch_size:
        for t in list(inputs) + list(outputs):
            if not t.shape or t.shape[0] != max_batch_size:
                raise ValueError(f"dynamic batching up to {max_batch_size}: {t.name} has shape "
                                 f"{t.shape}; every input and output must have the batch first")
    text = f'name: "{name}"\nbackend: "python"\nmax_batch_size: {max_batch_size}\n'
    text += _tensors("input", inputs, max_batch_size)
    text += _tensors("output", outputs, max_batch_size)
    if max_batch_size:
        text += (f"dynamic_batching {{ max_queue_delay_microseconds: {queue_delay_us} }}\n")
    text += f"instance_group [ {{ kind: KIND_CPU count: {instances} }} ]\n"
    for key, value in sorted((parameters or {}).items()):
        text += f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n'
    return text
