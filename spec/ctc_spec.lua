-- ctc_spec.lua — F.ctc_loss and nn.CTCLoss against PyTorch 1.13's values and gradients
-- (spec/fixtures/ctc_torch.lua, written by spec/fixtures/make_ctc.py; its 0-based classes plus
-- one here): padded and concatenated targets, unequal lengths, a repeated label, another blank,
-- every reduction, infeasible targets (inf, or 0 with zero_infinity); the argument checks.
local tide = require("tide")
local D = require("spec.support.device")
local P = require("spec.support.porting")

local T = dofile("spec/fixtures/ctc_torch.lua")
local DEV = D.name
local nn = tide.nn
local F = nn.functional

local function ids(v)
    return tide.tensor(v, { dtype = "int64", device = DEV }) + 1
end

local function lp(x)
    return x:reshape(6, 3, 5):log_softmax(3)
end

local function catch(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return tostring(err)
end

describe("ctc_loss, PyTorch's values (" .. DEV .. ")", function()
    local function ctc(opts, targets, inl, tgl)
        return function(x)
            return F.ctc_loss(lp(x), targets or ids(T.TARGETS), inl or T.INPUT_LENGTHS,
                tgl or T.TARGET_LENGTHS, opts)
        end
    end
    local CASES = {
        ctc_mean = { ctc(), T.LOGITS },
        ctc_sum = { ctc({ reduction = "sum" }), T.LOGITS },
        ctc_none = { function(x)
            return nn.CTCLoss({ reduction = "none" })(lp(x), ids(T.TARGETS),
                tide.tensor(T.INPUT_LENGTHS), tide.tensor(T.TARGET_LENGTHS))
        end, T.LOGITS },
        ctc_concat = { ctc({ reduction = "none" }, ids(T.CONCAT)), T.LOGITS },
        ctc_blank = { ctc({ blank = 5, reduction = "none" }, ids({ { 1, 2, 2 }, { 3, 0, 0 },
            { 0, 0, 1 } })), T.LOGITS },
        ctc_zero_infinity = { ctc({ reduction = "none", zero_infinity = true },
            ids({ { 1, 1, 1 }, { 2, 3, 1 }, { 4, 4, 4 } }), { 6, 3, 4 }, { 3, 3, 3 }), T.LOGITS },
    }
    P.run_cases(it, T, CASES, function(name, fn, ...)
        P.check_case(T.cases[name], name, DEV, { out = 1e-12, grad = 1e-10 }, fn, ...)
    end)

    it("gives inf for a target no alignment fits, as PyTorch", function()
        local x = P.t64(T.LOGITS, DEV)
        local loss = F.ctc_loss(lp(x), ids({ { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 } }), { 6, 3, 4 },
            { 3, 3, 3 }, { reduction = "none" })
        P.close(T.values.infeasible, loss, 1e-12, "infeasible")
    end)
end)

describe("ctc_loss checks (" .. DEV .. ")", function()
    it("name the argument at fault", function()
        local x = lp(P.t64(T.LOGITS, DEV))
        local tg = ids(T.TARGETS)
        assert.matches("tide: ctc_loss: input_lengths must list 3 lengths (one per sample), " ..
            "got 2 of them", catch(function() return F.ctc_loss(x, tg, { 6, 6 }, { 3, 2, 3 }) end),
            1, true)
        assert.matches("tide: ctc_loss: input_lengths[2] = 7 exceeds the 6 time steps",
            catch(function() return F.ctc_loss(x, tg, { 6, 7, 6 }, { 3, 2, 3 }) end), 1, true)
        assert.matches("tide: ctc_loss: blank must be a class 1..5, got 0",
            catch(function() return F.ctc_loss(x, tg, { 6, 5, 6 }, { 3, 2, 3 }, { blank = 0 }) end),
            1, true)
        assert.matches("tide: ctc_loss: concatenated targets hold 8 labels, the target lengths " ..
            "sum to 9", catch(function()
                return F.ctc_loss(x, ids(T.CONCAT), { 6, 5, 6 }, { 3, 3, 3 })
            end), 1, true)
        assert.matches("tide: ctc_loss: expected log_probs {T, N, C}",
            catch(function() return F.ctc_loss(x[1], tg, { 6 }, { 3 }) end), 1, true)
    end)
end)
