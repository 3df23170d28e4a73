"""Our own OpenVINO driver for exported Qwen3-VL folders (see engine.py for why)."""

from desktop.core.engine.engine import EngineConfig, ModelInfo, VLMEngine

__all__ = ["EngineConfig", "ModelInfo", "VLMEngine"]
