-- Batches of sequences of different lengths (issue 27): nn.utils.rnn's pad_sequence,
-- pack_padded_sequence, pad_packed_sequence, pack_sequence, unpad_sequence, unpack_sequence and
-- PackedSequence, and nn.RNN / nn.LSTM / nn.GRU on a PackedSequence, against PyTorch 1.13
-- (Debian's python3-torch): spec/fixtures/packed_seq_torch.lua, made by
-- spec/fixtures/make_packed_seq.py, holds the inputs, outputs and the gradients of
-- sum_k sum(outputs[k] * weights[k]).
local tide = require("tide")
local nn = require("tide.nn")
local fx = require("spec.support.fixtures")
local REF = dofile("spec/fixtures/packed_seq_torch.lua")
local RU = nn.utils.rnn

local function T(r, device)
    return tide.tensor(r.data, { dtype = "float32", device = device }):view(r.shape)
end

local function close(got, want, what, tol)
    fx.close(got, want, tol or 1e-5, what)
end

-- an integer tensor equal to the fixture's
local function ints(got, want, what)
    assert.are.same(want.shape, got.shape, what .. ": shape")
    assert.are.equal("int64", got.dtype, what .. ": dtype")
    local flat = got:to("cpu"):reshape(-1):totable()
    for i, v in ipairs(want.data) do
        assert.are.equal(v, flat[i], what .. " element " .. i)
    end
end

local function raises_here(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.matches("packed_seq_spec%.lua:%d+: tide: " .. pattern, tostring(err))
end

local function copy(t)
    local o = {}
    for k, v in pairs(t or {}) do
        o[k] = v
    end
    return o
end

-- runs the case: outputs and input gradients against PyTorch's (and parameters' when there is a
-- module); returns what run gave besides the outputs
local function check_case(name, run, m, device)
    local c = REF[name]
    if m then
        local sd = {}
        for k, v in pairs(c.params) do
            sd[k] = T(v)
        end
        m:load_state_dict(sd)
        if device then
            m:to(device)
        end
    end
    local inputs = {}
    for i, v in ipairs(c.inputs) do
        inputs[i] = T(v, device):requires_grad_(true)
    end
    local outs, extra = run(inputs, c, m)
    assert.are.equal(#c.outputs, #outs)
    local loss
    for i, o in ipairs(outs) do
        close(o, c.outputs[i], name .. " output " .. i)
        local l = o:mul(T(c.weights[i], device)):sum()
        loss = loss and loss:add(l) or l
    end
    loss:backward()
    if m then
        local params = m:named_parameters()
        for k, want in pairs(c.grads.params) do
            assert.is_not_nil(params[k], name .. ": parameter " .. k)
            close(params[k].grad, want, name .. " grad " .. k)
        end
    end
    for i, want in ipairs(c.grads.inputs) do
        close(inputs[i].grad, want, name .. " input grad " .. i)
    end
    return extra, c
end

-- the PackedSequence's index parts equal PyTorch's (1-based indices)
local function same_packing(p, c, name)
    ints(p.batch_sizes, c.extra.batch_sizes, name .. " batch_sizes")
    assert.are.equal("cpu", p.batch_sizes.device.type)
    if c.extra.sorted_indices then
        ints(p.sorted_indices, c.extra.sorted_indices, name .. " sorted_indices")
        ints(p.unsorted_indices, c.extra.unsorted_indices, name .. " unsorted_indices")
    else
        assert.is_nil(p.sorted_indices)
        assert.is_nil(p.unsorted_indices)
    end
end

describe("nn.utils.rnn", function()
    it("pad_sequence matches PyTorch (time-major, and batch_first with padding_value)", function()
        check_case("pad_sequence", function(xs)
            return { RU.pad_sequence(xs) }
        end)
        check_case("pad_sequence_bf", function(xs, c)
            return { RU.pad_sequence(xs, copy(c.opts)) }
        end)
    end)
    it("pack_padded_sequence matches PyTorch: data, batch_sizes, 1-based indices", function()
        local p = check_case("pack_unsorted", function(xs, c)
            local pk = RU.pack_padded_sequence(xs[1], c.call.lengths, copy(c.opts))
            return { pk.data }, pk
        end)
        same_packing(p, REF.pack_unsorted, "pack_unsorted")
        -- lengths as a tensor, sorted with batch_first: no indices
        p = check_case("pack_sorted_bf", function(xs, c)
            local pk = RU.pack_padded_sequence(xs[1], tide.tensor(c.call.lengths,
                { dtype = "int64" }), copy(c.opts))
            return { pk.data }, pk
        end)
        same_packing(p, REF.pack_sorted_bf, "pack_sorted_bf")
    end)
    it("pad_packed_sequence matches PyTorch (batch_first, padding_value, total_length)",
        function()
            local lengths = check_case("pad_packed", function(xs, c)
                local pk = RU.pack_padded_sequence(xs[1], c.call.lengths,
                    { enforce_sorted = false })
                local y, l = RU.pad_packed_sequence(pk, copy(c.opts))
                return { y }, l
            end)
            ints(lengths, REF.pad_packed.extra.lengths, "lengths")
            assert.are.equal("cpu", lengths.device.type)
        end)
    it("pack_sequence matches PyTorch", function()
        local p = check_case("pack_sequence", function(xs, c)
            local pk = RU.pack_sequence(xs, copy(c.opts))
            return { pk.data }, pk
        end)
        same_packing(p, REF.pack_sequence, "pack_sequence")
    end)
    it("unpack_sequence and unpad_sequence give the sequences back", function()
        local seqs = { tide.randn(3, 2), tide.randn(1, 2), tide.randn(4, 2) }
        for _, enforce in ipairs({ false }) do
            local back = RU.unpack_sequence(RU.pack_sequence(seqs, { enforce_sorted = enforce }))
            for i, s in ipairs(seqs) do
                assert.is_true(fx.same(back[i], s), "sequence " .. i)
            end
        end
        local padded = RU.pad_sequence(seqs, { batch_first = true })
        for i, s in ipairs(RU.unpad_sequence(padded, { 3, 1, 4 }, { batch_first = true })) do
            assert.is_true(fx.same(s, seqs[i]))
        end
    end)
    it("PackedSequence: fields, read-only, tostring, to(dtype)", function()
        local p = RU.pack_sequence({ tide.randn(2, 3), tide.randn(3, 3) },
            { enforce_sorted = false })
        assert.is_true(nn.PackedSequence.is_packed(p))
        assert.are.same({ 2, 2, 1 }, p.batch_sizes:totable())
        assert.are.same({ 2, 1 }, p.sorted_indices:totable())
        assert.are.same({ 2, 1 }, p.unsorted_indices:totable())
        assert.matches("PackedSequence%(data = float32 {5, 3} on cpu, batch_sizes = {2, 2, 1}",
            tostring(p))
        raises_here("PackedSequence: is read%-only", function()
            p.data = tide.zeros(5, 3)
        end)
        local q = p:to("float64")
        assert.are.equal("float64", q.data.dtype)
        assert.is_true(rawequal(p:to("float32"), p))
        -- built by hand, as PyTorch's constructor: unsorted_indices is the inverse
        local r = nn.PackedSequence(tide.randn(5, 3), tide.tensor({ 2, 2, 1 }),
            tide.tensor({ 2, 1 }))
        assert.are.same({ 2, 1 }, r.unsorted_indices:totable())
        raises_here("PackedSequence: data has 4 rows but batch_sizes add up to 5", function()
            nn.PackedSequence(tide.randn(4, 3), tide.tensor({ 2, 2, 1 }))
        end)
    end)
    it("raises on bad lengths and options, naming the function and the fix", function()
        local x = tide.randn(4, 3, 2)
        raises_here("pack_padded_sequence: lengths must be sorted in decreasing order when " ..
            "enforce_sorted is true, got 3 after 2; pass {enforce_sorted = false}", function()
                RU.pack_padded_sequence(x, { 2, 3, 1 })
            end)
        raises_here("pack_padded_sequence: sequence 3 has length 0; every sequence needs at " ..
            "least one step", function()
                RU.pack_padded_sequence(x, { 3, 2, 0 })
            end)
        raises_here("pack_padded_sequence: sequence 1 has length 5 but the input has 4 time " ..
            "steps", function()
                RU.pack_padded_sequence(x, { 5, 2, 1 })
            end)
        raises_here("pack_padded_sequence: expected 3 lengths %(the batch size%), got 2",
            function()
                RU.pack_padded_sequence(x, { 2, 1 })
            end)
        raises_here('pack_padded_sequence: unknown option "enforce_sort"', function()
            RU.pack_padded_sequence(x, { 3, 2, 1 }, { enforce_sort = false })
        end)
        local p = RU.pack_padded_sequence(x, { 3, 2, 1 })
        raises_here("pad_packed_sequence: expected total_length to be an integer at least the " ..
            "length of the longest sequence %(3%), got 2", function()
                RU.pad_packed_sequence(p, { total_length = 2 })
            end)
        raises_here("pad_packed_sequence: expected a PackedSequence", function()
            RU.pad_packed_sequence(x)
        end)
        raises_here("pad_sequence: sequence 2 is float32 {2, 3} on cpu, sequence 1 float32 " ..
            "{2, 2} on cpu", function()
                RU.pad_sequence({ tide.randn(2, 2), tide.randn(2, 3) })
            end)
        raises_here("LSTM: expected a PackedSequence of data %[N, 3%] %(input_size%), got data " ..
            "of shape {6, 2}", function()
                nn.LSTM(3, 4)(p)
            end)
        raises_here("GRU: expected h0 of shape {1, 3, 4}, got {1, 2, 4}", function()
            nn.GRU(2, 4)(p, tide.zeros(1, 2, 4))
        end)
    end)
end)

local function run_packed(xs, c, m)
    local lstm = m.__name == "LSTM"
    local o = copy(c.call)
    local bf = c.opts.batch_first == true
    local pk = RU.pack_padded_sequence(xs[1], o.lengths, { batch_first = bf,
        enforce_sorted = o.enforce_sorted })
    local out, h
    if xs[2] then
        out, h = m(pk, lstm and { xs[2], xs[3] } or xs[2])
    else
        out, h = m(pk)
    end
    assert.is_true(nn.PackedSequence.is_packed(out))
    if lstm then
        return { out.data, h[1], h[2] }, out
    end
    return { out.data, h }, out
end

local CASES = {
    { "lstm_deep_bi", "LSTM" }, { "lstm_sorted", "LSTM" }, { "lstm_proj_bi", "LSTM" },
    { "gru_bf_bi", "GRU" }, { "gru_deep", "GRU" }, { "rnn_relu_bi", "RNN" },
    { "rnn_tanh_nobias", "RNN" },
}

describe("nn.RNN, nn.LSTM and nn.GRU on a PackedSequence", function()
    for _, nc in ipairs(CASES) do
        local name, cls = nc[1], nc[2]
        it("match PyTorch: " .. name .. " (packed output, final states, gradients)", function()
            local c = REF[name]
            local m = nn[cls](c.ctor[1], c.ctor[2], copy(c.opts))
            local out = check_case(name, run_packed, m)
            same_packing(out, c, name)
        end)
    end
    it("give each sequence the states of running it alone", function()
        tide.manual_seed(3)
        local m = nn.GRU(3, 4, { num_layers = 2, bidirectional = true })
        local x = tide.randn(5, 3, 3)
        local lens = { 2, 5, 3 }
        local out, h = m(RU.pack_padded_sequence(x, lens, { enforce_sorted = false }))
        local y = RU.pad_packed_sequence(out)
        for b, L in ipairs(lens) do
            local ob, hb = m(x:narrow(1, 1, L):narrow(2, b, 1))
            assert.is_true(fx.same(ob, y:narrow(1, 1, L):narrow(2, b, 1), 1e-6))
            assert.is_true(fx.same(hb, h:narrow(2, b, 1), 1e-6))
        end
    end)
end)

describe("packed sequences on the GPU #cuda", function()
    it("the layers match PyTorch on cuda:0, batch_sizes staying on the CPU", function()
        if not tide.cuda.is_available() then
            pending("no CUDA device")
            return
        end
        for _, nc in ipairs(CASES) do
            local name, cls = nc[1], nc[2]
            local c = REF[name]
            local m = nn[cls](c.ctor[1], c.ctor[2], copy(c.opts))
            local out = check_case(name, run_packed, m, "cuda:0")
            same_packing(out, c, name)
            assert.are.equal("cuda", out.data.device.type)
        end
        local y = RU.pad_packed_sequence(RU.pack_sequence({ tide.randn(2, 3, { device = "cuda" }),
            tide.randn(3, 3, { device = "cuda" }) }, { enforce_sorted = false }))
        assert.are.equal("cuda", y.device.type)
    end)
end)
