"""The stateful language model: its KV cache lives inside one infer request and survives turns."""

from __future__ import annotations

import numpy as np
import openvino as ov

LOGITS_TO_KEEP = "logits_to_keep"


def keep_last_logits(model: ov.Model) -> ov.Model:
    """Computes the LM head for the last `logits_to_keep` positions only (a new [1] input).

    The export returns logits for every prompt position ([1, T, vocab]); generation needs only
    the last row, and verifying k drafted tokens needs the last k + 1. For Qwen3-VL-2B (vocab
    151,936) the head costs ~0.6 GFLOP and 0.6 MB of output per position: on a 1,000-token
    prompt, 0.6 TFLOP and 600 MB skipped. A runtime count, not a constant, so that one compiled
    model (one copy of the 1.4 GB weights) serves prefill, decoding and verification.
    """
    from openvino import opset13 as ops

    result = model.output("logits").get_node()
    head = result.input_value(0).get_node()
    while head.get_type_name() != "MatMul":
        if head.get_input_size() == 0:
            return model  # unexpected graph: leave it as exported
        head = head.input_value(0).get_node()
    hidden = head.input_value(0)
    count = ops.parameter([1], ov.Type.i64, name=LOGITS_TO_KEEP)
    count.output(0).get_tensor().set_names({LOGITS_TO_KEEP})
    last = ops.slice(
        hidden,
        ops.negative(count),
        ops.constant([2**62], ov.Type.i64),
        ops.constant([1], ov.Type.i64),
        ops.constant([1], ov.Type.i64),
    )
    head.input(0).replace_source_output(last.output(0))
    model.add_parameters([count])
    model.validate_nodes_and_infer_types()
    return model


class LanguageModel:
    """Feeds embeddings chunk by chunk; remembers which positions the KV state holds.

    Positions of rejected draft tokens stay in the state but are masked out of attention
    (`discard`): measured in bench/vlm_bench.py, that costs nothing per rejection, where cutting
    the state costs a copy of the whole cache. `compact` removes them in one copy at the end of
    an answer, so that the state lines up with the next prompt again.
    """

    def __init__(self, compiled: ov.CompiledModel, deepstack_layers: int, hidden: int) -> None:
        self._request = compiled.create_infer_request()
        self._deepstack_layers = deepstack_layers
        self._hidden = hidden
        self._keeps_count = any(LOGITS_TO_KEEP in port.get_names() for port in compiled.inputs)
        self._valid = np.ones(0, dtype=np.int64)  # 1 per held position, 0 once discarded
        self.kv_length = 0

    @property
    def discarded(self) -> int:
        return int(self.kv_length - self._valid.sum())

    def warm_up(self) -> None:
        """A short prefill and one decode step, then a clean state: the runtime prepares its
        weights for both paths at load instead of during the user's first question."""
        for steps in (8, 1):
            self.feed(np.zeros((steps, self._hidden), np.float32), np.zeros((3, steps), np.int64))
        self.reset()

    def reset(self) -> None:
        self._request.reset_state()
        self._valid = np.ones(0, dtype=np.int64)
        self.kv_length = 0

    def truncate(self, length: int) -> None:
        """Keeps the first `length` positions of the KV state (drops what followed)."""
        if length >= self.kv_length:
            return
        if length == 0:
            self.reset()
            return
        self._keep(np.arange(length))

    def discard(self, count: int) -> None:
        """Masks the last `count` positions out of attention from now on (rejected drafts)."""
        if count > 0:
            self._valid[self.kv_length - count :] = 0

    def compact(self) -> None:
        """Removes discarded positions from the state (one copy of the cache)."""
        if self.discarded:
            self._keep(np.flatnonzero(self._valid))

    def _keep(self, index: np.ndarray) -> None:
        for state in self._request.query_state():
            data = state.state.data
            axis = _sequence_axis(data.shape, self.kv_length)
            state.state = ov.Tensor(np.ascontiguousarray(np.take(data, index, axis=axis)))
        self._valid = self._valid[index]
        self.kv_length = len(index)

    def feed(
        self,
        embeds: np.ndarray,
        positions: np.ndarray,
        visual_mask: np.ndarray | None = None,
        deepstack: np.ndarray | None = None,
        logits: int = 1,
    ) -> np.ndarray:
        """Runs one chunk [T, hidden] at `positions` [3, T]; returns the last position's logits
        [vocab], or with `logits` = n > 1 those of the last n positions [n, vocab]."""
        embeds = embeds.reshape(1, -1, embeds.shape[-1])
        steps = embeds.shape[1]
        attention = np.concatenate([self._valid, np.ones(steps, np.int64)])[None]
        out = self.feed_rows(
            embeds,
            positions.reshape(3, 1, steps),
            attention,
            None if visual_mask is None else visual_mask.reshape(1, steps),
            deepstack,
            logits,
        )
        return out[0] if logits > 1 else out[0, -1]

    def feed_rows(
        self,
        embeds: np.ndarray,
        positions: np.ndarray,
        attention_mask: np.ndarray,
        visual_mask: np.ndarray | None = None,
        deepstack: np.ndarray | None = None,
        logits: int = 1,
    ) -> np.ndarray:
        """Runs a chunk for B rows at once: embeds [B, T, hidden], positions [3, B, T],
        attention_mask [B, held + T] (0 marks padding). Returns each row's last `logits`
        positions' logits [B, logits, V]."""
        rows, steps = embeds.shape[:2]
        if visual_mask is None or not visual_mask.any():
            visual_mask = np.zeros((rows, steps), dtype=bool)
            # The traced deepstack gather wants one (zero) row per position when nothing is visual.
            deepstack = np.zeros((self._deepstack_layers, rows * steps, self._hidden), np.float32)
        inputs = {
            "inputs_embeds": embeds,
            "attention_mask": attention_mask,
            "position_ids": positions.astype(np.int64),
            "visual_pos_masks": visual_mask,
            "deepstack_visual_embeds": deepstack,
            "beam_idx": np.arange(rows, dtype=np.int32),
        }
        if self._keeps_count:
            inputs[LOGITS_TO_KEEP] = np.asarray([min(logits, steps)], dtype=np.int64)
        self._request.infer(inputs)
        self.kv_length += steps
        self._valid = np.concatenate([self._valid, attention_mask[0, -steps:]])
        out = self._request.get_tensor("logits").data
        return np.array(out[:, -logits:], dtype=np.float32, copy=True)


def _sequence_axis(shape: tuple[int, ...], length: int) -> int:
    """The KV cache's sequence axis: [batch, kv_heads, seq, head_dim] in these exports; else
    the axis that has the held length (the last such, as head counts come first)."""
    if len(shape) == 4 and shape[2] == length:
        return 2
    return max(i for i, n in enumerate(shape) if n == length)
