from quant.ste import ClampedRoundSTE, QuantileScale

__all__ = ["ClampedRoundSTE", "QuantileScale"]
