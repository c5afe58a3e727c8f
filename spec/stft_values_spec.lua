-- stft_values_spec.lua: tide.stft / tide.istft (and t:stft) against PyTorch 1.13's torch.stft /
-- torch.istft: n_fft even and odd, hop_length, a win_length shorter than n_fft (the window
-- centered), a hann window or none (rectangular), center, pad_mode, normalized, onesided,
-- return_complex true (a complex tensor) and false (the real [..., 2] view), batched input,
-- float32 and float64; istft's round trip, its length, center = false with a window that
-- satisfies NOLA and the error where one does not, a complex input and istft's complex result,
-- and the gradient of stft(x):abs():sum(). The values are PyTorch's (torch 1.13, CPU), kept as
-- a digest: the element count, the first four values of the flat real view, the sum, a weighted
-- sum (weights 1..7 repeating) and the sum of absolute values.
local tide = require("tide")
local warn = require("tide._warn")

-- f() with stderr captured and the warning key forgotten: its result and what it printed
local function captured(key, f)
    local lines, real = {}, io.stderr
    io.stderr = { write = function(_, s) lines[#lines + 1] = s end } -- luacheck: ignore
    warn.reset(key)
    local ok, r = pcall(f)
    io.stderr = real -- luacheck: ignore
    if not ok then
        error(r, 0)
    end
    return r, table.concat(lines)
end

-- sin(0.7 i + b) + 0.3 cos(1.3 i (b + 1)), i = 0 .. L - 1, row b of B (B = 0: a 1-D signal)
local function signal(L, B, dtype)
    local rows = {}
    for b = 0, math.max(B, 1) - 1 do
        local r = {}
        for i = 0, L - 1 do
            r[i + 1] = math.sin(0.7 * i + b) + 0.3 * math.cos(1.3 * i * (b + 1))
        end
        rows[b + 1] = r
    end
    return tide.tensor(B == 0 and rows[1] or rows, { dtype = "float64" }):to(dtype)
end

-- "hann" (8 points) or "hannN" as a hann window of dtype; nil stays nil (rectangular)
local function window(name, dtype)
    return name and tide.hann_window(name == "hann" and 8 or tonumber(name:sub(5)),
        { dtype = dtype })
end

local function size_list(t)
    local s = {}
    for i = 1, t:dim() do
        s[i] = t:size(i)
    end
    return s
end

-- t (complex as its real view) against a PyTorch digest, within tol
local function check(what, t, want, tol)
    local v = (t:is_complex() and tide.view_as_real(t) or t):reshape({ -1 }):to("float64")
    assert.are.equal(want.n, v:numel(), what .. ": numel")
    local s1, s2, s3 = 0, 0, 0
    for i = 1, want.n do
        local x = v[i]:item()
        if want.head[i] then
            assert.is_true(math.abs(x - want.head[i]) <= tol,
                ("%s: value %d: %.17g vs PyTorch's %.17g"):format(what, i, x, want.head[i]))
        end
        s1, s2, s3 = s1 + x, s2 + x * ((i - 1) % 7 + 1), s3 + math.abs(x)
    end
    local scale = tol * want.n * 7
    assert.is_true(math.abs(s1 - want.sum) <= scale, what .. ": sum " .. s1)
    assert.is_true(math.abs(s2 - want.wsum) <= scale, what .. ": weighted sum " .. s2)
    assert.is_true(math.abs(s3 - want.asum) <= scale, what .. ": abs sum " .. s3)
end

-- PyTorch 1.13's results: { name, L, B, dtype, n_fft, options (window by name), shape, dtype,
-- digest }
local REF = {
stft = {
    { "even_hann", 16, 0, "float64", 8,
      { hop_length = 2, return_complex = true, window = "hann" },
      { 5, 9 }, "complex128", { n = 90,
        head = {2.4541681808552567, 0, 2.383065073034544, 0},
        sum = 1.9710947248395574, wsum = 9.4124220488320027, asum = 45.816282950655271 } },
    { "odd_hann", 15, 0, "float64", 7,
      { hop_length = 3, return_complex = true, window = "hann7" },
      { 4, 5 }, "complex128", { n = 40,
        head = {2.1204375549606622, 0, 1.4507172236478589, 0},
        sum = 1.7281335133840945, wsum = -14.235285832127063, asum = 23.100340280194089 } },
    { "default_hop", 16, 0, "float64", 8,
      { return_complex = true, window = "hann" },
      { 5, 9 }, "complex128", { n = 90,
        head = {2.4541681808552567, 0, 2.383065073034544, 0},
        sum = 1.9710947248395574, wsum = 9.4124220488320027, asum = 45.816282950655271 } },
    { "win_short", 16, 0, "float64", 8,
      { hop_length = 2, return_complex = true, win_length = 5, window = "hann5" },
      { 5, 9 }, "complex128", { n = 90,
        head = {1.4285868921541105, 0, 1.6407534872978764, 0},
        sum = 1.2266181253759387, wsum = 17.000182753668469, asum = 39.169024194862324 } },
    { "win_short_rect", 16, 0, "float64", 8,
      { hop_length = 2, return_complex = true, win_length = 5 },
      { 5, 9 }, "complex128", { n = 90,
        head = {3.1227474510167421, 0, 3.1227474510167421, 0},
        sum = -3.8961711868420656, wsum = -14.189005063101126, asum = 64.250299104226272 } },
    { "rect", 12, 0, "float64", 4,
      { hop_length = 2, return_complex = true },
      { 3, 7 }, "complex128", { n = 42,
        head = {2.4773177756279106, 0, 2.3982801151916751, 0},
        sum = 5.7137787206720585, wsum = 31.596590136590077, asum = 29.173834772269377 } },
    { "nocenter", 16, 0, "float64", 8,
      { center = false, hop_length = 3, return_complex = true, window = "hann" },
      { 5, 3 }, "complex128", { n = 30,
        head = {0.83418925496572072, 0, -2.3969923585995634, 0},
        sum = 0.036035282051917139, wsum = 5.6748461605666902, asum = 17.130340470594987 } },
    { "constant", 16, 0, "float64", 8,
      { hop_length = 4, pad_mode = "constant", return_complex = true, window = "hann" },
      { 5, 5 }, "complex128", { n = 50,
        head = {1.3770840904276285, 0, 0.83418925496572072, 0},
        sum = 1.2069680597011461, wsum = -2.8553973918757642, asum = 23.400081529121056 } },
    { "normalized", 16, 0, "float64", 8,
      { hop_length = 4, normalized = true, return_complex = true, window = "hann" },
      { 5, 5 }, "complex128", { n = 50,
        head = {0.86767948142750262, 0, 0.29493043948960745, 0},
        sum = 0.58095934104479818, wsum = -2.8369484321887568, asum = 8.6534827376620989 } },
    { "twosided", 12, 0, "float64", 6,
      { hop_length = 3, onesided = false, return_complex = true, window = "hann6" },
      { 6, 5 }, "complex128", { n = 60,
        head = {1.7508925557264889, 0, 1.7150394659951411, 0},
        sum = 1.1102230246251565e-15, wsum = -8.7683679539502943, asum = 30.691873281491038 } },
    { "real_view", 12, 0, "float64", 6,
      { hop_length = 3, return_complex = false, window = "hann6" },
      { 4, 5, 2 }, "float64", { n = 40,
        head = {1.7508925557264889, 0, 1.7150394659951411, 0},
        sum = 1.2723287692313447, wsum = -18.949771209753049, asum = 19.419933678215685 } },
    { "batched", 12, 2, "float64", 6,
      { hop_length = 3, return_complex = true, window = "hann6" },
      { 2, 4, 5 }, "complex128", { n = 80,
        head = {1.7508925557264889, 0, 1.7150394659951411, 0},
        sum = 3.2922188996811554, wsum = 18.423753242928555, asum = 42.84389712087107 } },
    { "float32", 16, 0, "float32", 8,
      { hop_length = 2, return_complex = true, window = "hann" },
      { 5, 9 }, "complex64", { n = 90,
        head = {2.4541680812835693, 0, 2.3830649852752686, 0},
        sum = 1.9710942655801773, wsum = 9.412423774600029, asum = 45.816281422972679 } },
    { "float32_real", 16, 2, "float32", 8,
      { hop_length = 4, return_complex = false, window = "hann" },
      { 2, 5, 5, 2 }, "float32", { n = 100,
        head = {2.4541680812835693, 0, 0.83418941497802734, 0},
        sum = 1.6621922552585602, wsum = 2.5262874960899353, asum = 54.211109668016434 } },
    { "odd_twosided_norm", 11, 0, "float64", 5,
      { hop_length = 2, normalized = true, onesided = false, return_complex = true,
        window = "hann5" },
      { 5, 6 }, "complex128", { n = 60,
        head = {0.63888348052435051, 0, 0.74113075981144727, 0},
        sum = -1.6653345369377348e-16, wsum = -0.19687135699894887, asum = 12.959173913605975 } },
},
istft = {
    { "rt_hann", 16, 0, "float64", 8,
      { hop_length = 2, window = "hann" },
      { 16 }, "float64", { n = 16,
        head = {0.30000000000000004, 0.72446733582506717, 0.72838310397777606, 0.64542967538883189},
        sum = 1.9701323568506788, wsum = 12.126663288668064, asum = 9.4662358603946757 } },
    { "rt_odd", 15, 0, "float64", 7,
      { hop_length = 2, window = "hann7" },
      { 15 }, "float64", { n = 15,
        head = {0.29999999999999988, 0.72446733582506706, 0.72838310397777573, 0.64542967538883189},
        sum = 2.6110836258781642, wsum = 13.408565826723038, asum = 8.825284591367188 } },
    { "rt_f32", 16, 0, "float32", 8,
      { hop_length = 2, window = "hann" },
      { 16 }, "float32", { n = 16,
        head = {0.30000001192092896, 0.72446733713150024, 0.72838306427001953, 0.64542967081069946},
        sum = 1.9701322913169861, wsum = 12.126662880182266, asum = 9.4662357270717621 } },
    { "rt_batched", 16, 2, "float64", 8,
      { hop_length = 2, window = "hann" },
      { 2, 16 }, "float64", { n = 32,
        head = {0.30000000000000004, 0.72446733582506717, 0.72838310397777606, 0.64542967538883189},
        sum = 2.2613456403388259, wsum = 21.293630867416272, asum = 20.43955073751971 } },
    { "rt_rect", 16, 0, "float64", 8,
      { hop_length = 4 },
      { 16 }, "float64", { n = 16,
        head = {0.3000000000000001, 0.72446733582506706, 0.72838310397777595, 0.645429675388832},
        sum = 1.9701323568506779, wsum = 12.126663288668066, asum = 9.4662358603946757 } },
    { "rt_norm_twosided", 16, 0, "float64", 8,
      { hop_length = 2, normalized = true, onesided = false, window = "hann" },
      { 16 }, "float64", { n = 16,
        head = {0.29999999999999999, 0.72446733582506695, 0.72838310397777584, 0.64542967538883189},
        sum = 1.9701323568506781, wsum = 12.126663288668064, asum = 9.4662358603946739 } },
    { "rt_nocenter", 16, 0, "float64", 8,
      { center = false, hop_length = 2 },
      { 16 }, "float64", { n = 16,
        head = {0.30000000000000004, 0.72446733582506717, 0.72838310397777595, 0.645429675388832},
        sum = 1.9701323568506783, wsum = 12.126663288668064, asum = 9.4662358603946757 } },
    { "rt_winshort", 16, 0, "float64", 8,
      { hop_length = 2, win_length = 6, window = "hann6" },
      { 16 }, "float64", { n = 16,
        head = {0.29999999999999999, 0.72446733582506706, 0.72838310397777584, 0.645429675388832},
        sum = 1.9701323568506788, wsum = 12.126663288668068, asum = 9.4662358603946757 } },
    { "len_short", 16, 0, "float64", 8,
      { hop_length = 2, length = 13, window = "hann" },
      { 13 }, "float64", { n = 13,
        head = {0.30000000000000004, 0.72446733582506717, 0.72838310397777606, 0.64542967538883189},
        sum = 2.5304891308521142, wsum = 12.07896403255458, asum = 8.4895433200124391 } },
    { "len_long", 16, 0, "float64", 8,
      { hop_length = 3, length = 19, window = "hann" },
      { 19 }, "float64", { n = 19,
        head = {0.29999999999999999, 0.72446733582506706, 0.72838310397777595, 0.645429675388832},
        sum = 2.6070724724098668, wsum = 15.358342759602307, asum = 10.358322752282563 } },
},
cin = { { 6, 5 }, "complex128", { n = 60,
        head = {1.7508925557264889, 1.2194556268490566, 1.7150394659951413, -0.78643063088029608},
        sum = 2.7755575615628914e-16, wsum = -9.0345500750855461, asum = 38.322614550965838 } },
icplx = { { 12 }, "complex128", { n = 24,
        head = {0.29999999999999993, 0.46976695146354236, 0.72446733582506695, 0.46461031657692392},
        sum = 2.9612152654784647, wsum = 15.548777635281752, asum = 11.899796549218953 } },
grad = {
    { "float64", 25.239620523355267, { n = 12,
        head = {-0.35292763101951419, 6.4764611233714682, 2.1760381269614264, 1.8163628979590749},
        sum = 13.368830505418856, wsum = 56.331770084785127, asum = 33.450612771577646 } },
    { "float32", 25.239620208740234, { n = 12,
        head = {-0.35292768478393555, 6.4764614105224609, 2.1760377883911133, 1.8163625001907349},
        sum = 13.368829846382141, wsum = 56.331765711307526, asum = 33.450611233711243 } },
},
}

local TOL = { float32 = 2e-6, float64 = 1e-12 }

-- a case's options with the window made
local function options(c, dtype, drop)
    local o = {}
    for k, v in pairs(c[6]) do
        if k ~= drop then
            o[k] = v
        end
    end
    o.window = window(c[6].window, dtype)
    return o
end

describe("stft and istft against PyTorch 1.13", function()
    it("stft: shapes, dtypes and values of every case, as tide.stft and t:stft", function()
        for _, c in ipairs(REF.stft) do
            local name, x, o = c[1], signal(c[2], c[3], c[4]), options(c, c[4])
            for _, z in ipairs({ tide.stft(x, c[5], o), x:stft(c[5], o) }) do
                assert.are.same(c[7], size_list(z), name .. ": shape")
                assert.are.equal(c[8], z.dtype, name .. ": dtype")
                check(name, z, c[9], TOL[c[4]])
            end
        end
        -- a complex input: a two-sided spectrum
        local re = signal(12, 0, "float64")
        local xc = tide.complex(re, re:flip(1) * 0.5)
        local hw6 = tide.hann_window(6, { dtype = "float64" })
        local zc = tide.stft(xc, 6, { hop_length = 3, window = hw6, return_complex = true })
        assert.are.same(REF.cin[1], size_list(zc), "complex input: shape")
        assert.are.equal(REF.cin[2], zc.dtype, "complex input: dtype")
        check("complex input", zc, REF.cin[3], 1e-12)
        -- istft's complex result (PyTorch's return_complex = true, two-sided)
        local yc = tide.istft(zc, 6, { hop_length = 3, window = hw6, onesided = false,
            return_complex = true })
        assert.are.same(REF.icplx[1], size_list(yc), "istft complex: shape")
        assert.are.equal(REF.icplx[2], yc.dtype, "istft complex: dtype")
        check("istft complex", yc, REF.icplx[3], 1e-12)
        -- return_complex nil on a real input: PyTorch 1.13's warning and the real [..., 2] view
        local r, printed = captured("stft.return_complex", function()
            return tide.stft(signal(12, 0, "float64"), 4, { hop_length = 2 })
        end)
        assert.are.same({ 3, 7, 2 }, size_list(r))
        assert.are.equal("float64", r.dtype)
        assert.truthy(printed:find("stft will soon require the return_complex parameter", 1, true))
        -- n_fft equal to the length (center = false): one frame
        assert.are.same({ 9, 1 }, size_list(tide.stft(signal(16, 0, "float64"), 16,
            { center = false, return_complex = true })))
    end)

    it("istft: PyTorch's values, the round trip, length and the real [..., 2] input", function()
        for _, c in ipairs(REF.istft) do
            local name, x, tol = c[1], signal(c[2], c[3], c[4]), TOL[c[4]]
            local so = options(c, c[4], "length")
            so.return_complex = true
            local z = tide.stft(x, c[5], so)
            local y = tide.istft(z, c[5], options(c, c[4]))
            assert.are.same(c[7], size_list(y), name .. ": shape")
            assert.are.equal(c[8], y.dtype, name .. ": dtype")
            check(name, y, c[9], tol)
            if not c[6].length then -- the round trip: x back
                local err = (y:to("float64") - x:to("float64")):abs():max():item()
                assert.is_true(err <= tol, name .. ": round trip error " .. err)
            end
        end
        -- PyTorch 1.13 still takes stft's real [..., 2] result, warning once
        local c = REF.istft[1]
        local z = tide.stft(signal(c[2], c[3], c[4]), c[5], { hop_length = 2,
            window = window("hann", "float64"), return_complex = true })
        local y, printed = captured("istft.real_input", function()
            return tide.istft(tide.view_as_real(z), c[5], options(c, c[4]))
        end)
        check("istft of the real view", y, c[9], 1e-12)
        assert.truthy(printed:find("istft will require a complex-valued input tensor", 1, true))
    end)

    it("z:istft(...) as PyTorch's Tensor.istft", function()
        local c = REF.istft[1]
        local z = tide.stft(signal(c[2], c[3], c[4]), c[5], { hop_length = 2,
            window = window("hann", "float64"), return_complex = true })
        check("z:istft", z:istft(c[5], options(c, c[4])), c[9], 1e-12)
    end)

    it("stft and istft raise PyTorch's errors", function()
        local x = signal(16, 0, "float64")
        local hw8 = tide.hann_window(8, { dtype = "float64" })
        local function raises(want, f, ...)
            local ok, e = pcall(f, ...)
            assert.is_false(ok, want)
            assert.truthy(tostring(e):find(want, 1, true), tostring(e))
        end
        raises("tide: stft: expected 0 < win_length <= n_fft, but got win_length=6, n_fft=4",
            tide.stft, x, 4, { win_length = 6, return_complex = true })
        raises("tide: stft: expected hop_length > 0, but got hop_length=0",
            tide.stft, x, 4, { hop_length = 0, return_complex = true })
        raises("tide: stft: expected 0 < win_length <= n_fft, but got win_length=0, n_fft=4",
            tide.stft, x, 4, { win_length = 0, return_complex = true })
        raises("tide: istft: expected hop_length > 0, but got hop_length=-1",
            tide.istft, tide.stft(x, 4, { return_complex = true }), 4, { hop_length = -1 })
        -- PyTorch's text reads "0 < n_fft < 16" for the check n_fft > 16
        raises("tide: stft: expected 0 < n_fft <= 16, but got n_fft=32",
            tide.stft, x, 32, { center = false, return_complex = true })
        raises("tide: stft: expected a 1-D window tensor of size equal to win_length=8",
            tide.stft, x, 8, { window = tide.ones({ 5 }, { dtype = "float64" }),
            return_complex = true })
        raises("tide: stft: expected a 1D or 2D tensor", tide.stft, x:view(1, 1, 16), 4,
            { return_complex = true })
        raises("tide: stft: Cannot have onesided output if window or input is complex",
            tide.stft, x:cdouble(), 4, { onesided = true, return_complex = true })
        raises("tide: istft: Cannot have onesided output if window or input is complex",
            tide.istft, tide.stft(x, 8, { return_complex = true }), 8, { return_complex = true })
        raises("tide: istft: expected a complex tensor (stft's return_complex = true result) or "
            .. "its view_as_real [..., 2] tensor, got a tensor of shape {5, 4}",
            tide.istft, tide.zeros({ 5, 4 }, { dtype = "float64" }), 8)
        -- NOLA: hop = n_fft with a hann window, and hann (zero at its ends) with center = false
        for _, hop in ipairs({ 8, 2 }) do
            local o = { hop_length = hop, window = hw8, center = false, return_complex = true }
            local z = tide.stft(x, 8, o)
            o.return_complex = nil
            raises("tide: istft: window overlap add min: 0", tide.istft, z, 8, o)
        end
    end)

    it("the gradient of stft(x):abs():sum() through a real input", function()
        for _, g in ipairs(REF.grad) do
            local dtype = g[1]
            local x = signal(12, 0, dtype):requires_grad_()
            local loss = tide.stft(x, 6, { hop_length = 2,
                window = tide.hann_window(6, { dtype = dtype }), return_complex = true })
                :abs():sum()
            loss:backward()
            local tol = dtype == "float32" and 2e-5 or 1e-10
            assert.is_true(math.abs(loss:item() - g[2]) <= tol, dtype .. ": loss " .. loss:item())
            check(dtype .. " grad", x.grad, g[3], tol)
        end
    end)
end)
