-- tide._dtype_limits: each float dtype's limits, torch.finfo's values, in one place for
-- tide.finfo (tide.dtype_queries), nan_to_num's defaults, Categorical's clamp and BERT's padding
-- mask: bits, eps (the gap after 1), max (the largest finite value; min is -max), tiny (the
-- smallest normal value), resolution
return {
    float32 = { bits = 32, eps = 2 ^ -23, max = 3.4028234663852886e38, tiny = 2 ^ -126,
        resolution = 1e-6 },
    float64 = { bits = 64, eps = 2 ^ -52, max = 1.7976931348623157e308, tiny = 2 ^ -1022,
        resolution = 1e-15 },
    float16 = { bits = 16, eps = 2 ^ -10, max = 65504, tiny = 2 ^ -14, resolution = 1e-3 },
    bfloat16 = { bits = 16, eps = 2 ^ -7, max = 3.3895313892515355e38, tiny = 2 ^ -126,
        resolution = 1e-2 },
}
