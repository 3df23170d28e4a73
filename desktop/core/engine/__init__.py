"""Our own OpenVINO driver for exported Qwen3-VL folders (see engine.py for why)."""

from desktop.core.conversation.engine_protocol import ModelInfo, Preparation
from desktop.core.engine.config import EngineConfig
from desktop.core.engine.engine import VLMEngine

__all__ = ["EngineConfig", "ModelInfo", "Preparation", "VLMEngine"]
