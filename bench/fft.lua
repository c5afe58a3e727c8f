-- fft.lua — tide.fft (four-step Cooley-Tukey and Bluestein over tide's matmuls, in Lua: see
-- lua/tide/fft.lua) against PyTorch's torch.fft (pocketfft) at its best thread setting
-- (bench/compare.lua), float32: a 1-D complex fft and a real rfft at 2^16 and 10^5 points (the
-- long signals of audio), a prime length (4099: Bluestein), a batch of 2-D rfft2 / irfft2 of
-- 64 x 64 (an FNO layer's transforms) and a batch of STFTs. No target: the figures say what the
-- matmul design costs against a hand-tuned FFT library, so a user knows which sizes it suits.
--   lua5.4 bench/fft.lua [REPS [ROUNDS]]     (bench/run.sh sets the paths)
local tide = require("tide")
local compare = require("bench.compare")
local fft = tide.fft

local REPS = tonumber(arg[1]) or 5
local ROUNDS = tonumber(arg[2]) or 3
local clock = tide.wall_time or os.clock

-- the deterministic signal bench/fft.py builds: sin(0.37 i) + 0.5 cos(1.3 i)
local function signal(...)
    local n = 1
    local shape = { ... }
    for _, d in ipairs(shape) do
        n = n * d
    end
    local i = tide.arange(0, n, { dtype = "float32" })
    return ((i * 0.37):sin() + (i * 1.3):cos() * 0.5):view(shape)
end

local CASES = {
    { "fft_65536", function() local z = fft.fft(signal(65536)) return function() return fft.fft(z) end end },
    { "rfft_65536", function() local x = signal(65536) return function() return fft.rfft(x) end end },
    { "fft_100000", function() local z = fft.fft(signal(100000)) return function() return fft.fft(z) end end },
    { "rfft_100000", function() local x = signal(100000) return function() return fft.rfft(x) end end },
    { "fft_4099", function() local x = signal(4099) return function() return fft.fft(x) end end },
    { "rfft2_b32_64x64", function()
        local x = signal(32, 64, 64)
        return function() return fft.irfft2(fft.rfft2(x), { s = { 64, 64 } }) end
    end },
    { "stft_b8_16000", function()
        local x, w = signal(8, 16000), tide.hann_window(512)
        return function()
            return tide.stft(x, 512, { hop_length = 128, window = w, return_complex = true })
        end
    end },
}

local function run_tide()
    local out = {}
    for _, c in ipairs(CASES) do
        local f = c[2]()
        f() -- warm up (the caches of twiddles)
        local best = math.huge
        for _ = 1, REPS do
            local t0 = clock()
            f()
            best = math.min(best, clock() - t0)
        end
        out[c[1]] = best * 1e3
    end
    return out
end

local res, why = compare.run { rounds = ROUNDS, tide = run_tide,
    reference = string.format("bench/fft.py %d", REPS) }
print(string.format("fft: float32, fastest of %d calls per round", REPS))
for _, c in ipairs(CASES) do
    local r = res and res[c[1]]
    if r then
        compare.print_line("fft " .. c[1], r, "ms", 1, ROUNDS)
    else
        print(string.format("fft %s: pytorch n/a (%s)", c[1], why or "no figure"))
    end
end
