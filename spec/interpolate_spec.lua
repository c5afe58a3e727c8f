-- interpolate_spec.lua — F.interpolate's modes against PyTorch 1.13's values and gradients
-- (spec/fixtures/interpolate_torch.lua, written by spec/fixtures/make_interpolate.py): bicubic
-- (up, down, align_corners, fractional scales), trilinear, nearest and nearest-exact over 1 to
-- 3 spatial dims, area; float32 as PyTorch's float kernels round; nn.Upsample on volumes; the
-- errors.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/interpolate_torch.lua")
local DEV = D.name
local unpack = table.unpack or unpack -- 5.1, LuaJIT

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

local function interp(shape, opts)
    return function(x)
        return F.interpolate(x:reshape(unpack(shape)), opts)
    end
end

describe("F.interpolate, PyTorch's values and gradients (" .. DEV .. ")", function()
    local CASES = {
        bicubic_up = { interp({ 1, 2, 3, 4 }, { scale_factor = 2, mode = "bicubic" }), T.S24 },
        bicubic_align = { interp({ 1, 2, 3, 4 }, { size = { 5, 7 }, mode = "bicubic",
            align_corners = true }), T.S24 },
        bicubic_down = { interp({ 1, 1, 5, 6 }, { size = { 3, 4 }, mode = "bicubic" }), T.S30 },
        bicubic_odd = { interp({ 1, 1, 5, 6 }, { scale_factor = { 1.7, 0.6 }, mode = "bicubic" }),
            T.S30 },
        trilinear = { interp({ 1, 2, 2, 3, 4 }, { size = { 3, 5, 6 }, mode = "trilinear" }),
            T.S48 },
        trilinear_align = { interp({ 1, 2, 2, 3, 4 }, { scale_factor = { 2, 1.5, 0.5 },
            mode = "trilinear", align_corners = true }), T.S48 },
        nearest_3d = { interp({ 1, 2, 2, 3, 4 }, { size = { 3, 5, 6 } }), T.S48 },
        nearest_exact_1d = { interp({ 2, 3, 5 }, { size = 8, mode = "nearest-exact" }), T.S30 },
        nearest_exact_2d = { interp({ 1, 2, 3, 4 }, { size = { 5, 3 }, mode = "nearest-exact" }),
            T.S24 },
        nearest_exact_3d = { interp({ 1, 2, 2, 3, 4 }, { scale_factor = 1.5,
            mode = "nearest-exact" }), T.S48 },
        area_1d = { interp({ 2, 3, 5 }, { size = 3, mode = "area" }), T.S30 },
        area_2d = { interp({ 1, 1, 5, 6 }, { size = { 2, 4 }, mode = "area" }), T.S30 },
        area_3d = { interp({ 1, 2, 2, 3, 4 }, { size = { 1, 2, 3 }, mode = "area" }), T.S48 },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-11 }, fn, ...)
    end)

    it("float32 follows PyTorch's float kernels", function()
        local function f32(v)
            return tide.tensor(v, { dtype = "float32", device = DEV })
        end
        P.close(T.values.bicubic_f32, F.interpolate(f32(T.S30):reshape(1, 1, 5, 6),
            { scale_factor = { 1.7, 0.6 }, mode = "bicubic" }), 1e-5, "bicubic float32")
        P.close(T.values.trilinear_f32, F.interpolate(f32(T.S48):reshape(1, 2, 2, 3, 4),
            { size = { 3, 5, 6 }, mode = "trilinear" }), 1e-5, "trilinear float32")
        P.close(T.values.nearest_exact_f32, F.interpolate(f32(T.S30):reshape(2, 3, 5),
            { size = 8, mode = "nearest-exact" }), 0, "nearest-exact float32")
    end)

    it("nn.Upsample resamples volumes", function()
        local x = P.t64(T.S48, DEV):reshape(1, 2, 2, 3, 4)
        local up = nn.Upsample({ size = { 3, 5, 6 }, mode = "trilinear" })
        P.close(T.cases.trilinear.out, up(x), 1e-12, "Upsample trilinear")
    end)

    it("names what it refuses", function()
        local img = tide.zeros({ 1, 1, 2, 2 }, { device = DEV })
        assert.matches('tide: interpolate: mode "trilinear" takes a 5-D {N, C, D, H, W} input, ' ..
            "got {1, 1, 2, 2}", catch(function()
                return F.interpolate(img, { size = 3, mode = "trilinear" })
            end), 1, true)
        assert.matches('tide: interpolate: mode "area" takes a 3-D {N, C, L}, 4-D {N, C, H, W} ' ..
            "or 5-D {N, C, D, H, W} input, got {2, 2}", catch(function()
                return F.interpolate(tide.zeros({ 2, 2 }, { device = DEV }), { size = 1,
                    mode = "area" })
            end), 1, true)
        assert.matches("tide: interpolate: align_corners is for the linear and cubic modes; " ..
            'leave it out with mode "nearest-exact"', catch(function()
                return F.interpolate(img, { size = 3, mode = "nearest-exact",
                    align_corners = false })
            end), 1, true)
        -- antialias is PyTorch's for bilinear and bicubic (spec/ported_scripts52_spec.lua)
        assert.matches('tide: interpolate: antialias is for the modes "bilinear" and ' ..
            '"bicubic" (as PyTorch\'s), not "nearest"', catch(function()
                return F.interpolate(img, { size = 1, mode = "nearest", antialias = true })
            end), 1, true)
    end)
end)

-- nearest upsampling by a whole factor is one expanded view copied (whole_repeats in
-- lua/tide/nn/_functional_interpolate.lua), the copy walking the long dim in its rows
-- (src/cpu/elementwise.c, long_rows): the same cells and gradients as repeat_interleave
describe("nearest upsampling by a whole factor", function()
    for _, case in ipairs({ { { 2, 3, 4, 5 }, { 2, 2 } }, { { 1, 2, 3, 4 }, { 3, 1 } },
        { { 2, 2, 7 }, { 4 } }, { { 1, 1, 2, 3, 4 }, { 2, 3, 1 } } }) do
        local shape, k = case[1], case[2]
        it(table.concat(shape, "x") .. " by " .. table.concat(k, ", "), function()
            local n = 1
            for _, s in ipairs(shape) do
                n = n * s
            end
            local x = tide.arange(n, { dtype = "float64" }):view(shape):requires_grad_()
            local scale = #k == 1 and k[1] or k
            local got = F.interpolate(x, { scale_factor = scale, mode = "nearest" })
            local want = x
            for i, f in ipairs(k) do
                want = want:repeat_interleave(f, 2 + i)
            end
            assert.are.same(want:detach():totable(), got:detach():totable())
            local w = tide.arange(got:numel(), { dtype = "float64" }):view(got.shape):sin()
            local g1 = tide.autograd.grad((got * w):sum(), x)[1]
            local g2 = tide.autograd.grad((want * w):sum(), x)[1]
            assert.is_true(tide.allclose(g1, g2, 0, 1e-12))
        end)
    end
    it("a factor that does not divide (7 to 10) keeps the index per dim", function()
        local x = tide.arange(7, { dtype = "float32" }):view(1, 1, 7)
        local got = F.interpolate(x, { size = 10, mode = "nearest" })
        -- PyTorch 1.13: floor(o * 0.7) + 1
        assert.are.same({ { { 0, 0, 1, 2, 2, 3, 4, 4, 5, 6 } } }, got:totable())
    end)
end)
