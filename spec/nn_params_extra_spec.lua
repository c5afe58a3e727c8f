-- nn_params_extra_spec.lua — nn.Parameter, nn.ParameterList and nn.ParameterDict (registration,
-- state_dict keys as PyTorch's), F.pdist, F.triplet_margin_with_distance_loss and its module,
-- nn.UpsamplingNearest2d / UpsamplingBilinear2d and the deprecated F.upsample*, against
-- PyTorch 1.13's values and gradients (spec/fixtures/nn_params_extra_torch.lua, written by
-- spec/fixtures/make_nn_params_extra.py); FeatureAlphaDropout by its properties (it draws);
-- errors, devices and printing.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/nn_params_extra_torch.lua")
local DEV = D.name
local unpack = table.unpack or unpack -- 5.1, LuaJIT

local function t64(v)
    return P.t64(v, DEV)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("nn extras, PyTorch's values (" .. DEV .. ")", function()
    local function cos_dist(a, b)
        return 1 - F.cosine_similarity(a, b)
    end
    local CASES = {
        pdist = { function(x) return F.pdist(x) end, T.X43 },
        pdist_p1 = { function(x) return F.pdist(x, 1) end, T.X33 },
        pdist_p3 = { function(x) return F.pdist(x, 3) end, T.X43 },
        pdist_p05 = { function(x) return F.pdist(x, 0.5) end, T.X33 },
        pdist_inf = { function(x) return F.pdist(x, math.huge) end, T.X33 },
        pdist_p0 = { function(x) return F.pdist(x, 0) end, T.X43 },
        triplet = { function(a, p, n) return F.triplet_margin_with_distance_loss(a, p, n) end,
            T.ANC, T.POS, T.NEG },
        triplet_swap_none = { function(a, p, n)
            return F.triplet_margin_with_distance_loss(a, p, n, { margin = 0.5, swap = true,
                reduction = "none" })
        end, T.ANC, T.POS, T.NEG },
        triplet_cosine_sum = { function(a, p, n)
            return F.triplet_margin_with_distance_loss(a, p, n, { distance_function = cos_dist,
                margin = 1.5, reduction = "sum" })
        end, T.ANC, T.POS, T.NEG },
        triplet_module = { function(a, p, n)
            return nn.TripletMarginWithDistanceLoss({ margin = 2, swap = true,
                distance_function = nn.PairwiseDistance({ p = 1 }) })(a, p, n)
        end, T.ANC, T.POS, T.NEG },
        up_nearest = { function(x) return nn.UpsamplingNearest2d({ scale_factor = 2 })(x) end,
            T.IMG },
        up_nearest_size = { function(x)
            return nn.UpsamplingNearest2d({ size = { 3, 5 } })(x)
        end, T.IMG },
        up_bilinear = { function(x) return nn.UpsamplingBilinear2d({ scale_factor = 2 })(x) end,
            T.IMG },
        up_bilinear_size = { function(x)
            return nn.UpsamplingBilinear2d({ size = { 3, 4 } })(x)
        end, T.IMG },
        upsample = { function(x)
            return F.upsample(x, { scale_factor = 2, mode = "bilinear", align_corners = false })
        end, T.IMG },
        upsample_nearest = { function(x) return F.upsample_nearest(x, { 4, 4 }) end, T.IMG },
        upsample_bilinear = { function(x)
            return F.upsample_bilinear(x, { scale_factor = 3 })
        end, T.IMG },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-10 }, fn, ...)
    end)

    it("pdist of one row is empty", function()
        assert.are.same(T.values.pdist_one_row, F.pdist(t64({ { 1, 2, 3 } })).shape)
    end)
end)

-- a model as the fixture's: a frozen nn.Parameter, a ParameterList, a ParameterDict, a Linear
local function model()
    local m = nn.Module()
    m.scale = nn.Parameter(tide.ones({ 2 }, { dtype = "float64", device = DEV }), false)
    m.plist = nn.ParameterList({ nn.Parameter(tide.zeros({ 2, 3 }, { device = DEV })),
        tide.zeros({ 3 }, { device = DEV }) })
    m.pdict = nn.ParameterDict({ beta = nn.Parameter(tide.zeros({ 2 }, { device = DEV })),
        alpha = nn.Parameter(tide.zeros({ 4 }, { device = DEV })) })
    m.fc = nn.Linear(3, 2):to(DEV)
    return m
end

-- the keys in order: a state_dict is callable (`for k, v in sd`, also on 5.1), else pairs
local function keys(t)
    local r = {}
    local mt = getmetatable(t)
    if mt and mt.__call then
        for k in t do
            r[#r + 1] = k
        end
    else
        for k in pairs(t) do
            r[#r + 1] = k
        end
    end
    return r
end

local function sorted(list)
    local r = { unpack(list) }
    table.sort(r)
    return r
end

describe("nn.Parameter and its containers (" .. DEV .. ")", function()
    it("register as PyTorch's, state_dict keys included", function()
        local m = model()
        local sd = nn.utils.state_dict_to_torch(m:state_dict()) -- "plist.1" as "plist.0"
        assert.are.same(sorted(T.values.state_keys), sorted(keys(sd))) -- (sd has no order)
        local names, grads = {}, {}
        for _, np in ipairs(m:named_parameters()) do
            names[#names + 1], grads[#grads + 1] = np[1], np[2].requires_grad
        end
        assert.are.same({ "scale", "plist.1", "plist.2", "pdict.alpha", "pdict.beta",
            "fc.weight", "fc.bias" }, names)
        assert.are.same(T.values.param_requires_grad, grads)
        assert.are.same({ "scale", "plist.1", "plist.2", "pdict.alpha", "pdict.beta",
            "fc.weight", "fc.bias" }, keys(m:state_dict()))
    end)

    it("Parameter shares its tensor's storage, a leaf", function()
        local t = tide.zeros({ 3 }, { dtype = "float64", device = DEV })
        local p = nn.Parameter(t)
        assert.is_true(p.requires_grad)
        assert.is_true(p.is_leaf)
        t:fill_(2)
        assert.are.same({ 2, 2, 2 }, p:to("cpu"):totable())
        local m = nn.Module()
        m:register_parameter("frozen", nn.Parameter(t, false))
        assert.is_false(m.frozen.requires_grad)
        assert.are.equal(1, #m:parameters())
    end)

    it("ParameterList: append, extend, index, #, ipairs, replace", function()
        local pl = nn.ParameterList()
        pl:append(tide.ones({ 2 }, { device = DEV }))
            :extend({ tide.zeros({ 3 }, { device = DEV }) })
        assert.are.same({ 3 }, pl[2].shape)
        assert.is_true(pl[1].requires_grad)
        local n = 0
        for i, p in ipairs(pl) do
            n = n + 1
            assert.are.equal(pl[i], p)
        end
        assert.are.equal(2, n)
        assert.are.equal(pl[2], pl:get_parameter("2"))
        assert.are.equal(5, pl:num_parameters())
        local seq = nn.Module()
        seq.w = pl
        assert.are.same({ "w.1", "w.2" }, keys(seq:state_dict()))
    end)

    it("ParameterDict: update, keys, values, items, set, contains, pop", function()
        local pd = nn.ParameterDict({ { "b", tide.ones({ 2 }, { device = DEV }) },
            { "a", tide.ones({ 1 }, { device = DEV }) } })
        assert.are.same({ "b", "a" }, pd:keys())
        pd.c = tide.zeros({ 3 }, { device = DEV })
        pd:update({ a = tide.zeros({ 5 }, { device = DEV }) })
        assert.are.same({ "b", "a", "c" }, pd:keys())
        assert.are.same({ 5 }, pd.a.shape)
        assert.are.same({ 5 }, pd["a"].shape)
        assert.are.equal(3, #pd:values())
        assert.are.equal("c", pd:items()[3][1])
        assert.is_true(pd:contains("c"))
        assert.is_true(pd.c.requires_grad)
        assert.are.same({ 3 }, pd:pop("c").shape)
        assert.is_false(pd:contains("c"))
        assert.are.same({ "b", "a" }, keys(pd:state_dict()))
    end)

    it("# counts them #lua53", function()
        local pl = nn.ParameterList({ tide.ones({ 2 }), tide.ones({ 3 }) })
        local pd = nn.ParameterDict({ a = tide.ones({ 2 }), b = tide.ones({ 1 }),
            c = tide.ones({ 1 }) })
        assert.are.equal(2, #pl)
        assert.are.equal(3, #pd)
    end)

    it("load_state_dict and to() keep them", function()
        local m, m2 = model(), model()
        m.plist[1]:detach():fill_(3)
        m2:load_state_dict(m:state_dict())
        assert.are.same({ 3, 3, 3 }, m2.plist[1][1]:to("cpu"):totable())
        m2:to("float64")
        assert.are.equal("float64", m2.plist[2].dtype)
        assert.are.equal("float64", m2.pdict.alpha.dtype)
    end)

    it("print as PyTorch's", function()
        local function shows(want, m)
            assert.matches(want, tostring(m), 1, true)
        end
        shows("ParameterList(1: Parameter containing: [float32 of size 2x3], 2: Parameter " ..
            "containing: [float32 of size 3]", nn.ParameterList({ tide.zeros({ 2, 3 }),
                tide.zeros({ 3 }) }))
        shows("ParameterDict(a: Parameter containing: [float64 of size 2])",
            nn.ParameterDict({ a = tide.zeros({ 2 }, { dtype = "float64" }) }))
        shows("UpsamplingNearest2d(scale_factor=2, mode=nearest)",
            nn.UpsamplingNearest2d({ scale_factor = 2 }))
        shows("UpsamplingBilinear2d(size={3, 4}, mode=bilinear)",
            nn.UpsamplingBilinear2d({ size = { 3, 4 } }))
        shows("FeatureAlphaDropout(p=0.5, inplace=false)", nn.FeatureAlphaDropout())
        shows("TripletMarginWithDistanceLoss  [0 parameters]\n  distance_function: " ..
            "PairwiseDistance", nn.TripletMarginWithDistanceLoss())
    end)
end)

describe("FeatureAlphaDropout, by its properties (" .. DEV .. ")", function()
    it("drops whole channels to PyTorch's two values", function()
        tide.manual_seed(7)
        local x = tide.ones({ 64, 32, 3 }, { dtype = "float64", device = DEV })
        local y = F.feature_alpha_dropout(x, { p = 0.2, training = true })
        local lo, hi = T.values.fad_values[1], T.values.fad_values[2]
        local is_lo = (y - lo):abs():lt(1e-9)
        local is_hi = (y - hi):abs():lt(1e-9)
        assert.is_true(is_lo:logical_or(is_hi):all():item())
        -- one draw per (sample, channel): the 3 elements of a channel agree
        local per = is_lo:to("int64"):sum(3)
        assert.is_true(per:eq(0):logical_or(per:eq(3)):all():item())
        local frac = is_lo:to("float64"):mean():item()
        assert.is_true(math.abs(frac - 0.2) < 0.05, "dropped " .. frac)
    end)

    it("keeps zero mean and unit variance, and is off in eval mode and by default", function()
        tide.manual_seed(3)
        local x = tide.randn({ 200, 100, 2 }, { dtype = "float64", device = DEV })
        local m = nn.FeatureAlphaDropout(0.3)
        local y = m(x)
        assert.is_true(math.abs(y:mean():item()) < 0.05)
        assert.is_true(math.abs(y:var():item() - 1) < 0.08)
        m:eval()
        assert.are.equal(x, m(x))
        assert.are.equal(x, F.feature_alpha_dropout(x))
        local z = F.feature_alpha_dropout(x, { p = 1, training = true })
        assert.are.equal(0, z:abs():sum():item())
    end)

    it("inplace writes the input; the gradient is each channel's scale", function()
        tide.manual_seed(5)
        local x = tide.ones({ 4, 6, 2 }, { dtype = "float64", device = DEV })
        local y = F.feature_alpha_dropout(x, { p = 0.5, training = true, inplace = true })
        assert.are.equal(x, y)
        local w = tide.ones({ 4, 6, 2 }, { dtype = "float64", device = DEV }):requires_grad_(true)
        local out = F.feature_alpha_dropout(w, { p = 0.5, training = true })
        out:sum():backward()
        local a = 1 / math.sqrt((1.7580993408473766 ^ 2 * 0.5 + 1) * 0.5)
        local g = w.grad
        assert.is_true((g - a):abs():lt(1e-12):logical_or(g:eq(0)):all():item())
    end)
end)

describe("nn extras errors (" .. DEV .. ")", function()
    it("name the function, the value at fault and the fix", function()
        local x = t64(T.X33)
        assert.matches("tide: pdist: expected a 2-D input {N, M}, got {3}",
            catch(function() return F.pdist(x[1]) end), 1, true)
        assert.matches("tide: pdist: p must be a non-negative number, got -1",
            catch(function() return F.pdist(x, -1) end), 1, true)
        assert.matches("tide: triplet_margin_with_distance_loss: margin must be greater than " ..
            "0, got 0", catch(function()
                return F.triplet_margin_with_distance_loss(x, x, x, { margin = 0 })
            end), 1, true)
        assert.matches("tide: triplet_margin_with_distance_loss: expected anchor, positive " ..
            "and negative of one rank, got {3, 3}, {3} and {3, 3}",
            catch(function() return F.triplet_margin_with_distance_loss(x, x[1], x) end), 1,
            true)
        assert.matches("tide: triplet_margin_with_distance_loss: distance_function must be a " ..
            "function or a module, got number", catch(function()
                return F.triplet_margin_with_distance_loss(x, x, x, { distance_function = 2 })
            end), 1, true)
        assert.matches("tide: triplet_margin_with_distance_loss: distance_function must " ..
            "return a tensor, got number", catch(function()
                return F.triplet_margin_with_distance_loss(x, x, x, {
                    distance_function = function() return 1 end })
            end), 1, true)
        assert.matches("tide: TripletMarginWithDistanceLoss: margin must be a number greater " ..
            "than 0, got -1", catch(function()
                return nn.TripletMarginWithDistanceLoss({ margin = -1 })
            end), 1, true)
        assert.matches("tide: UpsamplingNearest2d: give size or scale_factor (one of them)",
            catch(function() return nn.UpsamplingNearest2d() end), 1, true)
        assert.matches("tide: upsample_bilinear: mode \"bilinear\" takes a",
            catch(function() return F.upsample_bilinear(x:view(1, 3, 3), 2) end), 1, true)
        local img = t64(T.IMG)
        assert.matches("tide: upsample_nearest: size must be positive integers, got inf",
            catch(function() return F.upsample_nearest(img, math.huge) end), 1, true)
        assert.matches("tide: upsample: scale_factor must be positive finite numbers, got -2",
            catch(function() return F.upsample(img, { scale_factor = -2 }) end), 1, true)
        assert.matches("tide: UpsamplingBilinear2d: the output would take",
            catch(function()
                return nn.UpsamplingBilinear2d({ scale_factor = 1e12 })(img)
            end), 1, true)
        assert.matches("tide: feature_alpha_dropout: expected input {N, C, *} with at least " ..
            "2 dims (channels to drop), got {3}", catch(function()
                return F.feature_alpha_dropout(x[1], { training = true })
            end), 1, true)
        assert.matches("tide: feature_alpha_dropout: expected a probability p in [0, 1], got 2",
            catch(function() return F.feature_alpha_dropout(x, 2) end), 1, true)
        assert.matches("tide: Parameter: expected a tensor, got number",
            catch(function() return nn.Parameter(3) end), 1, true)
        assert.matches("tide: ParameterList:append: expected a tensor, got string",
            catch(function() return nn.ParameterList():append("w") end), 1, true)
        assert.matches("tide: ParameterList: index 3 out of range 1..1; append to add one",
            catch(function()
                local pl = nn.ParameterList({ x })
                pl[3] = x
            end), 1, true)
        assert.matches("tide: ParameterDict:update: the name 'keys' is a method or field of " ..
            "ParameterDict; choose another",
            catch(function() return nn.ParameterDict({ keys = x }) end), 1, true)
        assert.matches("tide: ParameterDict:update: expected a tensor for 'w', got number",
            catch(function() return nn.ParameterDict({ w = 1 }) end), 1, true)
    end)

    it("unknown options raise", function()
        local x = t64(T.ANC)
        local calls = {
            function() return F.triplet_margin_with_distance_loss(x, x, x, { p = 2 }) end,
            function() return nn.TripletMarginWithDistanceLoss({ p = 2 }) end,
            function() return nn.UpsamplingNearest2d({ scale_factor = 2, mode = "linear" }) end,
            function() return nn.UpsamplingBilinear2d({ size = 2, align_corners = false }) end,
            function() return F.upsample_nearest(x:view(1, 1, 3, 3), { scale = 2 }) end,
            function() return F.upsample(x:view(1, 1, 3, 3), { scale = 2 }) end,
            function() return F.feature_alpha_dropout(x, { prob = 0.5 }) end,
            function() return nn.FeatureAlphaDropout({ q = 0.5 }) end,
        }
        for i, f in ipairs(calls) do
            local err = catch(f)
            assert.matches("tide: [%w_]+: ", err, nil, false, "call " .. i)
            assert.truthy(err:find("unknown", 1, true) or err:find("option", 1, true),
                "call " .. i .. ": " .. err)
        end
    end)

    it("tensors on two devices raise", function()
        local a = t64(T.ANC)
        local b = tide.tensor(T.POS, { dtype = "float64", device = D.other })
        assert.matches("device", catch(function()
            return F.triplet_margin_with_distance_loss(a, b, a)
        end), 1, true)
        assert.matches("device", catch(function()
            return nn.TripletMarginWithDistanceLoss()(a, a, b)
        end), 1, true)
    end)
end)

describe("F.interpolate's sizes checked before its index tables grow (" .. DEV .. ")", function()
    it("refuses an infinite scale_factor and an output past the memory budget", function()
        local x = tide.zeros({ 1, 1, 4 }, { device = DEV })
        assert.matches("tide: interpolate: scale_factor inf makes dim 3 of size 4 infinite",
            catch(function() return F.interpolate(x, { scale_factor = math.huge }) end), 1, true)
        assert.matches("tide: interpolate: the output would take .* this process may use",
            catch(function() return nn.Upsample({ scale_factor = 1e12 })(x) end))
        assert.are.same({ 1, 1, 8 }, F.interpolate(x, { scale_factor = 2 }).shape)
    end)
end)
