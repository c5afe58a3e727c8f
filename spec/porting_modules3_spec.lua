-- porting_modules3_spec.lua — tide.nn's layer constructors and Module methods as a ported
-- PyTorch script calls them (tide.nn._signature): no argument is ever dropped (every class of
-- tide.nn walked), PyTorch's positional order (convolutions with size tuples, LSTM's
-- num_layers, Embedding's padding_idx), construction by name, padding = "same" / "valid"
-- against PyTorch 1.13's values, the Transformer family's positional masks, parameters({recurse
-- = false}), negative list indices, share_memory() and flatten_parameters().
local tide = require("tide")
local nn = tide.nn
local S = require("tide.nn._signature")
local unpack = table.unpack or unpack -- 5.1, LuaJIT

-- the message of f(...)'s error, its "file:line: " prefix cut
local function err(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return (tostring(e):gsub("^[^\n]-:%d+: ", ""))
end

local function same(a, b)
    assert.are.same(a:tolist(), b:tolist())
end

local function close(a, b, tol)
    assert.is_true(a:allclose(b, tol or 1e-5, tol or 1e-5), "values differ")
end

-- a module built twice from the same seed: its construction draws are the same
local function twin(f, g)
    tide.manual_seed(7)
    local a = f()
    tide.manual_seed(7)
    local b = g()
    return a, b
end

local function names_of(listing)
    local out = {}
    for _, e in ipairs(listing) do
        out[#out + 1] = e[1]
    end
    return out
end

describe("every nn class refuses an argument past those it takes", function()
    -- the classes that take any arguments (the others whose init takes `...` count their own)
    local ANY = { Sequential = "any number of modules", Identity = "any, ignored (PyTorch's)" }
    local LEADING = { Threshold = { 0.1, 0 } } -- valid arguments before the extra one
    local NOT_MODULES = { Parameter = true, PackedSequence = true }

    local function classes()
        local out = {}
        for f in io.popen("ls lua/tide/nn"):lines() do
            local name = f:match("^([A-Z][%w]*)%.lua$")
            if name and not NOT_MODULES[name] then
                out[#out + 1] = name
            end
        end
        table.sort(out)
        return out
    end

    it("walks every class of tide.nn (a signature, a fixed init or an explicit list)", function()
        local walked, with_signature = 0, 0
        for _, name in ipairs(classes()) do
            local cls = nn[name]
            assert.is_table(cls, name)
            local init = cls.init
            local spec = S.of(init)
            local nparams, isvararg = require("tide.op_args").arity(init)
            local msg
            if ANY[name] then
                assert.is_true(pcall(cls, nn.Identity(), nn.Identity()), name)
            elseif spec then
                -- PyTorch's names positionally, then a table by name: one more positional raises
                local n = #spec.names
                local a = {}
                a[n + 2] = 7
                msg = err(cls, unpack(a, 1, n + 2))
                assert.are.equal(("tide: %s: expected at most %d argument%s and an options " ..
                    "table, got %d (argument #%d is a number); remove it: %s takes no such " ..
                    "argument or option"):format(name, n, n == 1 and "" or "s", n + 2, n + 2,
                    name), msg, name)
                with_signature = with_signature + 1
            elseif not isvararg then
                local max = nparams - 1
                local a = {}
                a[max + 1] = 7
                msg = err(cls, unpack(a, 1, max + 1))
                assert.are.equal(("tide: %s: expected at most %d argument%s, got %d (argument " ..
                    "#%d is a number); remove it: %s takes no such argument or option"):format(
                    name, max, max == 1 and "" or "s", max + 1, max + 1, name), msg, name)
            else
                -- `...`: the class checks its own count (the activations, the dropouts)
                local a = { unpack(LEADING[name] or {}) }
                a[12] = 7
                msg = err(cls, unpack(a, 1, 12))
                assert.matches("^tide: " .. name .. ": expected at most %d+ arguments?, got 12 " ..
                    "%(argument #12 is a number%); remove it", msg)
            end
            walked = walked + 1
        end
        assert.is_true(walked > 150, "walked " .. walked)
        assert.is_true(with_signature > 60, "with a signature " .. with_signature)
    end)

    it("a trailing nil is an omitted argument; the user's line is named", function()
        assert.are.equal(12, nn.Linear(3, 4, false, nil, nil):num_parameters())
        -- (PyTorch's Linear(in_features, out_features, bias, device, dtype): argument #4 is a
        -- device, #6 is past them)
        local ok, e = pcall(function() return nn.Linear(3, 4, false, 5) end)
        assert.is_false(ok)
        assert.matches("porting_modules3_spec.lua:%d+: tide: Linear: device must be a device " ..
            "or a device name such as \"cpu\" or \"cuda:0\", got number", e)
        ok, e = pcall(function() return nn.Linear(3, 4, false, "cpu", "float32", 5) end)
        assert.is_false(ok)
        assert.matches("porting_modules3_spec.lua:%d+: tide: Linear: expected at most 5 " ..
            "arguments and an options table, got 6 %(argument #6 is a number%)", e)
        -- a class without a signature: the count its init declares
        assert.are.equal("tide: ModuleList: expected at most 1 argument, got 2 (argument #2 " ..
            "is a table); remove it: ModuleList takes no such argument or option",
            err(nn.ModuleList, {}, { extra = true }))
        -- a model's own class too
        local Net = nn.Module:extend("Net")
        function Net:init(n)
            self.fc = nn.Linear(n, 1)
        end
        assert.are.equal(3, Net(2):num_parameters())
        assert.are.equal("tide: Net: expected at most 1 argument, got 2 (argument #2 is a " ..
            "table); remove it: Net takes no such argument or option", err(Net, 2, { bias = 1 }))
    end)
end)

describe("PyTorch's positional order and construction by name", function()
    it("ConvTranspose2d's options after output_padding (DCGAN) are read, not dropped", function()
        -- nn.ConvTranspose2d(64, 32, 4, 2, 1, 0, bias=False): 64 * 32 * 4 * 4 = 32768
        local a, b = twin(function()
            return nn.ConvTranspose2d(64, 32, 4, 2, 1, 0, { bias = false })
        end, function()
            return nn.ConvTranspose2d(64, 32, 4, { stride = 2, padding = 1, bias = false })
        end)
        assert.are.equal(32768, a:num_parameters())
        assert.is_nil(a.bias)
        same(a.weight, b.weight)
        local c = nn.ConvTranspose2d(64, 32, 4, 2, 1, { bias = false })
        assert.are.equal(32768, c:num_parameters())
        -- PyTorch's positional groups, bias, dilation; tide's older boolean bias at #7 kept
        local g = nn.ConvTranspose2d(4, 8, 3, 1, 0, 0, 2, false, 2)
        assert.are.same({ 2, 2 }, g.dilation)
        assert.are.equal(2, g.groups)
        assert.is_nil(g.bias)
        assert.is_nil(nn.ConvTranspose2d(4, 8, 3, 1, 0, 0, false).bias)
        assert.is_not_nil(nn.ConvTranspose2d(4, 8, 3, 1, 0, 0, true).bias)
        local t3 = nn.ConvTranspose3d(4, 2, 3, 1, 0, 0, 1, false)
        assert.are.equal(4 * 2 * 27, t3:num_parameters())
    end)

    it("Conv1d/2d/3d take stride, padding, dilation, groups, bias, padding_mode", function()
        -- super_resolution: nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        local a, b = twin(function() return nn.Conv2d(1, 64, { 5, 5 }, { 1, 1 }, { 2, 2 }) end,
            function() return nn.Conv2d(1, 64, 5, { stride = 1, padding = 2 }) end)
        same(a.weight, b.weight)
        same(a.bias, b.bias)
        local x = tide.randn(1, 1, 6, 6)
        same(a(x), b(x))
        -- nn.Conv2d(3, 8, 4, 2, 1, 1, 1, False): dilation 1, groups 1, no bias (384 weights)
        local c = nn.Conv2d(3, 8, 4, 2, 1, 1, 1, false)
        assert.is_nil(c.bias)
        assert.are.equal(384, c:num_parameters())
        local d = nn.Conv2d(4, 8, 3, 1, 2, 2, 2, true, "reflect")
        assert.are.same({ 2, 2, 2, 2, 2 }, { d.ph, d.dh, d.dw, d.groups, d.pw })
        assert.are.equal("reflect", d.padding_mode)
        -- tide's older (in, out, k, stride, padding, bias) with a boolean bias
        assert.is_nil(nn.Conv2d(3, 8, 4, 2, 1, false).bias)
        assert.is_nil(nn.Conv1d(3, 8, 4, 2, 1, false).bias)
        assert.is_nil(nn.Conv3d(3, 8, 2, 1, 0, false).bias)
        local e3 = nn.Conv3d(2, 4, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 0, 1 }, 1, 2, false)
        assert.are.same({ 1, 0, 1 }, e3.padding)
        assert.are.equal(2, e3.groups)
        assert.are.same({ 2 }, nn.Conv1d(2, 4, 3, 1, 0, 2).dilation)
    end)

    it("a name given positionally and by name raises; a count past PyTorch's too", function()
        assert.are.equal("tide: Conv2d: stride given twice, as argument #4 and by name; pass " ..
            "it once", err(nn.Conv2d, 1, 10, 5, 2, { stride = 2 }))
        assert.are.equal("tide: Conv2d: expected at most 11 arguments and an options table, " ..
            "got 12 (argument #12 is a number); remove it: Conv2d takes no such argument or " ..
            "option", err(nn.Conv2d, 1, 10, 5, 1, 0, 1, 1, true, "zeros", "cpu", "float32", 5))
        assert.are.equal("tide: LSTM: num_layers given twice, as argument #3 and by name; pass " ..
            "it once", err(nn.LSTM, 8, 16, 2, { num_layers = 2 }))
        assert.matches('tide: Conv2d: unknown option "strides"',
            err(nn.Conv2d, 1, 10, 5, { strides = 2 }), 1, true)
    end)

    it("nn.LSTM/GRU/RNN take num_layers third, the rest in PyTorch's order", function()
        -- word_language_model: nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        local a, b = twin(function() return nn.LSTM(8, 16, 2, { dropout = 0.5 }) end,
            function() return nn.LSTM(8, 16, { num_layers = 2, dropout = 0.5 }) end)
        assert.are.same({ 2, 0.5 }, { a.num_layers, a.dropout })
        same(a.weight_hh_l1, b.weight_hh_l1)
        local g = nn.GRU(8, 16, 2, false, true, 0.25, true)
        assert.are.same({ 2, false, true, 0.25, true }, { g.num_layers, g.bias, g.batch_first,
            g.dropout, g.bidirectional })
        assert.are.equal(4, nn.LSTM(8, 16, 1, true, false, 0, false, 4).proj_size)
        -- RNN: torch 1.13's (bias 4th) and PyTorch 2's (nonlinearity 4th, a string)
        local r1 = nn.RNN(8, 16, 2, "relu", false)
        assert.are.same({ "relu", false, 2 }, { r1.nonlinearity, r1.bias, r1.num_layers })
        local r2 = nn.RNN(8, 16, 2, false, true, { nonlinearity = "relu" })
        assert.are.same({ "relu", false, true }, { r2.nonlinearity, r2.bias, r2.batch_first })
        -- mnist_rnn: nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        local m = nn.LSTM({ input_size = 28, hidden_size = 64, batch_first = true })
        assert.are.same({ 28, 64, true }, { m.input_size, m.hidden_size, m.batch_first })
        local c = nn.LSTMCell(4, 5, false)
        assert.is_false(c.bias)
        assert.are.equal("relu", nn.RNNCell(4, 5, true, "relu").nonlinearity)
        assert.are.equal(2, nn.RNNBase("GRU", 4, 5, 2).num_layers)
        -- flatten_parameters: PyTorch's no-op off cuDNN, returning nothing
        assert.are.equal(0, select("#", a:flatten_parameters()))
        assert.are.equal("tide: flatten_parameters: expected at most 1 argument, got 2 " ..
            "(argument #2 is a boolean); remove it: flatten_parameters takes no such argument " ..
            "or option", err(a.flatten_parameters, a, true))
    end)

    it("nn.Embedding(num, dim, padding_idx, ...) positional: padding_idx a 1-based row", function()
        local a, b = twin(function() return nn.Embedding(10, 4, 3) end,
            function() return nn.Embedding(10, 4, { padding_idx = 3 }) end)
        assert.are.equal(3, a.padding_idx)
        same(a.weight, b.weight)
        same(a.weight[3], tide.zeros(4))
        assert.are.equal(10, nn.Embedding(10, 4, -1).padding_idx)
        assert.are.equal(1.5, nn.Embedding(10, 4, nil, 1.5).max_norm)
        assert.matches("padding_idx must be a row of the 10 embeddings: 1..10",
            err(nn.Embedding, 10, 4, 0), 1, true)
        local e = nn.EmbeddingBag(10, 4, nil, nil, nil, "sum")
        assert.are.equal("sum", e.mode)
    end)

    it("builds from a single table of PyTorch's names, required ones included", function()
        local a, b = twin(function() return nn.Linear({ in_features = 4, out_features = 3 }) end,
            function() return nn.Linear(4, 3) end)
        same(a.weight, b.weight)
        assert.is_nil(nn.Linear(4, { out_features = 3, bias = false }).bias)
        local c = nn.Conv2d(1, 10, { kernel_size = 5 })
        assert.are.same({ 5, 5 }, { c.kh, c.kw })
        local s = nn.Conv2d({ in_channels = 1, out_channels = 64, kernel_size = { 7, 7 },
            stride = { 2, 2 }, padding = { 3, 3 }, bias = false })
        assert.are.same({ 7, 2, 3 }, { s.kh, s.sh, s.ph })
        assert.is_nil(s.bias)
        local p = nn.MaxPool2d({ kernel_size = 2 })
        assert.are.same({ 2, 2 }, { p.kh, p.sh })
        local x = tide.randn(1, 1, 4, 4)
        same(p(x), nn.MaxPool2d(2)(x))
        assert.are.equal(4, nn.Embedding({ num_embeddings = 10, embedding_dim = 4 }).embedding_dim)
        local l = nn.TransformerEncoderLayer({ d_model = 16, nhead = 4, dim_feedforward = 32 })
        assert.are.equal(32, l.linear1.out_features)
        local l2 = nn.TransformerEncoderLayer(16, 4, 32, 0.0, "gelu", 1e-6, true, true)
        assert.are.same({ 32, true, 1e-6 }, { l2.linear1.out_features, l2.norm_first,
            l2.norm1.eps })
        assert.are.equal(3, nn.PixelShuffle({ upscale_factor = 3 }).upscale_factor)
        assert.are.equal('tide: PixelShuffle: unknown option "factor"; options are upscale_factor',
            err(nn.PixelShuffle, { factor = 3 }))
        assert.are.equal("tide: PixelShuffle: expected upscale_factor to be an integer >= 1, " ..
            "got 1.5", err(nn.PixelShuffle, 1.5))
        assert.are.same({ 4, 5 }, nn.LayerNorm({ normalized_shape = { 4, 5 } }).normalized_shape)
        assert.are.equal(0, nn.LayerNorm({ 4, 5 }, 1e-5, false):num_parameters())
        local mha = nn.MultiheadAttention(8, 2, 0.0, false, false, false, 7)
        assert.are.same({ 8, 7 }, mha.k_proj_weight.shape)
        assert.is_nil(mha.in_proj_bias)
        assert.are.equal(2, nn.Unflatten({ dim = 2, unflattened_size = { 2, 3 } }).dim)
        assert.are.equal(0.5, nn.ConstantPad2d({ padding = 1, value = 0.5 }).value)
        assert.are.equal(3, nn.Flatten(1, 3).end_dim)
        local lp = nn.LPPool2d(2, 3, 1, true)
        assert.are.same({ 2, 3, 1, true }, { lp.norm_type, lp.kernel_size, lp.stride,
            lp.ceil_mode })
        local lz = nn.LazyConv2d({ out_channels = 8, kernel_size = 3 })
        assert.are.equal(8, lz(tide.randn(1, 2, 5, 5)):size(2))
        assert.are.equal("tide: LazyConv2d: expected at most 10 arguments and an options " ..
            "table, got 11 (argument #11 is a number); remove it: LazyConv2d takes no such " ..
            "argument or option", err(nn.LazyConv2d, 8, 3, 1, 0, 1, 1, true, "zeros", "cpu",
            "float32", 5))
        local ll = nn.LazyLinear(5, false)
        assert.are.same({ 2, 5 }, ll(tide.randn(2, 3)).shape)
        assert.is_nil(ll.bias)
    end)

    it("BatchNorm's fifth argument track_running_stats (false: batch statistics always)", function()
        local m = nn.BatchNorm1d(3, 1e-5, 0.1, true, false)
        assert.is_nil(m.running_mean)
        assert.are.equal(0, #m:buffers())
        local x = tide.randn(8, 3)
        m:eval()
        local want = x:sub(x:mean(1, true)):div(x:var(1, { keepdim = true, correction = 0 }):add(1e-5):sqrt())
        close(m(x), want, 1e-4)
        local lz = nn.LazyBatchNorm1d({ track_running_stats = false })
        assert.are.equal(3, lz(x):size(2))
        assert.is_nil(lz.running_var)
    end)
end)

describe("padding = \"same\" / \"valid\" (PyTorch >= 1.9)", function()
    it("matches PyTorch 1.13, an even kernel's extra padding after", function()
        local x = tide.arange(1, 7):to("float32"):reshape(1, 1, 6)
        local m = nn.Conv1d(1, 1, 4, { padding = "same", bias = false })
        tide.no_grad(function() m.weight:copy_(tide.tensor({ 1, 2, 3, 4 }):reshape(1, 1, 4)) end)
        -- F.conv1d(arange(1., 7.).reshape(1,1,6), tensor([1.,2.,3.,4.]).reshape(1,1,4),
        --          padding="same")
        assert.are.same({ 20, 30, 40, 50, 32, 17 }, m(x):flatten():tolist())
        local r = nn.Conv1d(1, 1, 4, 1, "same", 1, 1, false, "reflect")
        tide.no_grad(function() r.weight:copy_(m.weight) end)
        -- nn.Conv1d(1,1,4,padding="same",bias=False,padding_mode="reflect") with that weight
        assert.are.same({ 22, 30, 40, 50, 52, 48 }, r(x):flatten():tolist())
        local d = nn.Conv1d(1, 1, 3, 1, "same", 2, 1, false)
        tide.no_grad(function() d.weight:copy_(tide.tensor({ 1, 2, 3 }):reshape(1, 1, 3)) end)
        -- nn.Conv1d(1,1,3,padding="same",dilation=2,bias=False), weight [1,2,3]
        assert.are.same({ 11, 16, 22, 28, 13, 16 }, d(x):flatten():tolist())
    end)

    it("Conv2d and Conv3d, zeros and replicate", function()
        local x = tide.arange(1, 13):to("float32"):reshape(1, 1, 3, 4)
        local w = tide.arange(1, 7):to("float32"):reshape(1, 1, 2, 3)
        local m = nn.Conv2d(1, 1, { 2, 3 }, { padding = "same", bias = false })
        local r = nn.Conv2d(1, 1, { 2, 3 }, 1, "same", 1, 1, false, "replicate")
        tide.no_grad(function()
            m.weight:copy_(w)
            r.weight:copy_(w)
        end)
        -- F.conv2d(arange(1., 13.).reshape(1,1,3,4), arange(1., 7.).reshape(1,1,2,3),
        --          padding="same")
        assert.are.same({ 69, 106, 127, 79, 133, 190, 211, 127, 48, 62, 68, 35 },
            m(x):flatten():tolist())
        -- the same with padding_mode="replicate"
        assert.are.same({ 90, 106, 127, 139, 174, 190, 211, 223, 198, 214, 235, 247 },
            r(x):flatten():tolist())
        local c3 = nn.Conv3d(1, 1, 2, { padding = "same", bias = false })
        tide.no_grad(function() c3.weight:fill_(1) end)
        -- F.conv3d(arange(1., 9.).reshape(1,1,2,2,2), ones(1,1,2,2,2), padding="same")
        assert.are.same({ 36, 20, 22, 12, 26, 14, 15, 8 },
            c3(tide.arange(1, 9):to("float32"):reshape(1, 1, 2, 2, 2)):flatten():tolist())
        -- an odd kernel pads evenly: the symmetric padding itself
        local s = nn.Conv2d(3, 8, 3, { padding = "same" })
        assert.are.same({ 1, 1 }, { s.ph, s.pw })
        assert.are.same({ 0, 0 }, { nn.Conv2d(3, 8, 3, 1, "valid").ph, nn.Conv2d(3, 8, 3, 1,
            "valid").pw })
        local y = s(tide.randn(2, 3, 5, 7))
        assert.are.same({ 2, 8, 5, 7 }, y.shape)
        -- gradients flow through the padded input
        local xin = tide.randn(1, 1, 3, 4):requires_grad_(true)
        m(xin):sum():backward()
        assert.are.same({ 1, 1, 3, 4 }, xin.grad.shape)
    end)

    it("refuses a stride other than 1 and an unknown string", function()
        assert.are.equal("tide: Conv2d: padding = \"same\" needs stride 1 (PyTorch's rule), " ..
            "got stride {2, 2}; give the padding as numbers", err(nn.Conv2d, 1, 1, 3, 2, "same"))
        assert.are.equal("tide: Conv1d: padding = \"same\" needs stride 1 (PyTorch's rule), " ..
            "got stride 2; give the padding as numbers",
            err(nn.Conv1d, 1, 1, 3, { stride = 2, padding = "same" }))
        assert.are.equal("tide: Conv3d: unknown padding \"full\"; use an integer, a size per " ..
            "dim, \"same\" or \"valid\"", err(nn.Conv3d, 1, 1, 3, 1, "full"))
    end)
end)

describe("the Transformer family's masks positionally, as PyTorch's forward", function()
    local function causal(n)
        return nn.Transformer.generate_square_subsequent_mask(n)
    end

    it("Transformer(src, tgt, src_mask, tgt_mask, ...) equals the options form", function()
        tide.manual_seed(3)
        local m = nn.Transformer(8, 2, 1, 1, 16, 0.0):eval()
        local src, tgt = tide.randn(5, 2, 8), tide.randn(4, 2, 8)
        local kpm = tide.tensor({ { false, false, false, false, true },
            { false, false, false, false, false } })
        local want = m(src, tgt, { tgt_mask = causal(4), src_key_padding_mask = kpm,
            memory_key_padding_mask = kpm })
        close(m(src, tgt, nil, causal(4), nil, kpm, nil, kpm), want)
        close(m(src, tgt, nil, causal(4), { src_key_padding_mask = kpm,
            memory_key_padding_mask = kpm }), want)
        assert.are.equal("tide: Transformer: tgt_mask given twice, as argument #4 and by name; " ..
            "pass it once", err(m, src, tgt, nil, causal(4), { tgt_mask = causal(4) }))
    end)

    it("the encoder, decoder and their layers; MultiheadAttention's order", function()
        tide.manual_seed(4)
        local layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0):eval()
        local enc = nn.TransformerEncoder(layer, 2):eval()
        local x = tide.randn(5, 2, 8)
        local kpm = tide.tensor({ { false, false, false, true, true },
            { false, false, false, false, false } })
        close(enc(x, causal(5), kpm), enc(x, { mask = causal(5), src_key_padding_mask = kpm }))
        close(layer(x, nil, kpm), layer(x, { src_key_padding_mask = kpm }))
        local dl = nn.TransformerDecoderLayer(8, 2, 16, 0.0):eval()
        local dec = nn.TransformerDecoder(dl, 1):eval()
        local t = tide.randn(4, 2, 8)
        close(dec(t, x, causal(4), nil, nil, kpm), dec(t, x, { tgt_mask = causal(4),
            memory_key_padding_mask = kpm }))
        close(dl(t, x, nil, nil, nil, kpm), dl(t, x, { memory_key_padding_mask = kpm }))
        local mha = nn.MultiheadAttention(8, 2)
        local o1, w1 = mha(x, x, x, kpm, true, causal(5), false)
        local o2, w2 = mha(x, x, x, { key_padding_mask = kpm, attn_mask = causal(5),
            average_attn_weights = false })
        close(o1, o2)
        close(w1, w2)
        assert.are.same({ 2, 2, 5, 5 }, w1.shape)
        assert.matches("tide: TransformerEncoderLayer: expected at most 4 arguments and an " ..
            "options table, got 5 %(argument #5 is a number%)", err(layer, x, nil, nil, true, 1))
    end)
end)

describe("Module methods", function()
    local function model()
        local m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        m.scale = tide.ones(1):requires_grad_(true)
        m:register_buffer("step", tide.zeros(1))
        return m
    end

    it("parameters/buffers honour recurse = false, positionally or by name", function()
        local m = model()
        assert.are.equal(5, #m:parameters())
        assert.are.equal(1, #m:parameters({ recurse = false }))
        assert.are.equal(m.scale, m:parameters(false)[1])
        assert.are.equal(4, #m:buffers())
        assert.are.equal(m.step, m:buffers({ recurse = false })[1])
        assert.are.equal(1, #m:buffers(false))
        assert.are.same({ "scale" }, names_of(m:named_parameters({ recurse = false })))
        assert.are.same({ "step" }, names_of(m:named_buffers("", false)))
        assert.are.same({ "net.scale", "net.1.weight", "net.1.bias", "net.2.weight",
            "net.2.bias" }, names_of(m:named_parameters("net")))
        assert.are.same({ "step" }, names_of(m:named_buffers({ recurse = false })))
    end)

    it("named_parameters's remove_duplicate = false lists a shared tensor twice", function()
        local a = nn.Linear(2, 2)
        local m = nn.Sequential(a, a)
        assert.are.equal(2, #m:named_parameters())
        assert.are.same({ "1.weight", "1.bias", "2.weight", "2.bias" },
            names_of(m:named_parameters({ remove_duplicate = false })))
    end)

    it("rejects unknown keys, bad values and extra arguments", function()
        local m = model()
        assert.are.equal('tide: parameters: unknown option "recurs" (did you mean "recurse"?)',
            err(m.parameters, m, { recurs = false }))
        assert.are.equal("tide: parameters: expected recurse to be a boolean, got number",
            err(m.parameters, m, 0))
        assert.are.equal("tide: buffers: expected at most 2 arguments and an options table, " ..
            "got 3 (argument #3 is a number); remove it: buffers takes no such argument or " ..
            "option", err(m.buffers, m, false, 1))
        assert.are.equal("tide: named_parameters: recurse given twice, as argument #3 and by " ..
            "name; pass it once", err(m.named_parameters, m, "", true, { recurse = false }))
        assert.are.equal("tide: named_buffers: expected prefix to be a string, got number",
            err(m.named_buffers, m, 1))
    end)

    it("share_memory() shares every parameter and buffer and returns the module", function()
        local m = model()
        assert.are.equal(m, m:share_memory())
        for _, t in ipairs(m:parameters()) do
            assert.is_true(t:is_shared())
        end
        for _, t in ipairs(m:buffers()) do
            assert.is_true(t:is_shared())
        end
        assert.are.equal("tide: share_memory: expected at most 1 argument, got 2 (argument #2 " ..
            "is a boolean); remove it: share_memory takes no such argument or option",
            err(m.share_memory, m, true))
    end)
end)

describe("lists index from the end with a negative index", function()
    it("Sequential, ModuleList, ParameterList: [-1] is the last, past the start nil", function()
        local a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Tanh()
        local s = nn.Sequential(a, b, c)
        assert.are.equal(c, s[-1])
        assert.are.equal(a, s[-3])
        assert.is_nil(s[-4]) -- out of range: nil, as past the end (s[4]) is today
        assert.is_nil(s[4])
        assert.is_nil(s[0])
        local ml = nn.ModuleList({ a, b })
        assert.are.equal(b, ml[-1])
        assert.are.equal(a, ml[-2])
        assert.is_nil(ml[-3])
        ml:append(c)
        assert.are.equal(c, ml[-1])
        local p, q = tide.ones(2), tide.zeros(3)
        local pl = nn.ParameterList({ p, q })
        assert.are.equal(3, pl[-1]:numel())
        assert.are.equal(pl[1], pl[-2])
        assert.is_nil(pl[-3])
        -- methods are reached as before, and a subclass keeps the indexing
        assert.is_function(s.forward)
        local Sub = nn.Sequential:extend("Sub")
        local sub = Sub(nn.Linear(2, 4), nn.Tanh())
        assert.are.equal("Tanh", sub[-1].__name)
        assert.are.same({ 1, 4 }, sub(tide.ones(1, 2)).shape)
        assert.are.equal(0, #nn.Sequential())
        assert.is_nil(nn.Sequential()[-1])
    end)
end)

describe("options against values (tide.pytorch_args), the same rule in every call", function()
    local P = require("tide.pytorch_args")
    local F = nn.functional
    -- a config table with defaults behind __index: options, as a plain table is
    local function config(t)
        return setmetatable(t, { __index = { unused = true } })
    end

    it("reads a table of string keys as options, a list or an object as a value", function()
        assert.is_true(P.is_options({}))
        assert.is_true(P.is_options({ stride = 2 }))
        assert.is_true(P.is_options(config({ lr = 0.1 })))
        assert.is_false(P.is_options({ 2, 2 }))
        assert.is_false(P.is_options({ nil, 7 }))
        assert.is_false(P.is_options({ 1, stride = 2 }))
        assert.is_false(P.is_options(tide.ones(2)))
        assert.is_false(P.is_options(nn.Linear(1, 1)))
        assert.is_false(P.is_options(tide.Generator()))
    end)

    it("takes a config table with a metatable as options everywhere", function()
        assert.are.equal(1, #nn.Linear(2, 3, config({ bias = false })):parameters())
        local x = tide.ones(4)
        assert.is_true(F.dropout(x, config({ p = 0.5, training = false })):equal(x))
        local opt = tide.optim.SGD(nn.Linear(2, 2):parameters(), config({ lr = 0.25 }))
        assert.are.equal(0.25, opt.param_groups[1].lr)
        local s = tide.optim.lr_scheduler.StepLR(opt, config({ step_size = 3 }))
        assert.are.equal(3, s.step_size)
    end)

    it("names a parameter given both ways by its argument number, in every family", function()
        local function msg(f, ...)
            local ok, e = pcall(f, ...)
            assert.is_false(ok)
            return (tostring(e):gsub("^[^\n]-:%d+: ", ""))
        end
        local x = tide.ones(2, 3)
        assert.are.equal("tide: dropout: p given twice, as argument #2 and by name; pass it once",
            msg(F.dropout, x, 0.5, { p = 0.5 }))
        assert.are.equal("tide: Conv2d: stride given twice, as argument #4 and by name; pass it "
            .. "once", msg(nn.Conv2d, 1, 1, 3, 2, { stride = 2 }))
        assert.are.equal("tide: SGD: lr given twice, as argument #2 and by name; pass it once",
            msg(tide.optim.SGD, nn.Linear(1, 1):parameters(), 0.1, { lr = 0.1 }))
    end)

    it("takes an integral float as a size (Lua's hidden / 2, k ^ 2), a fraction raises", function()
        local l = nn.Linear(256 / 2, 2 ^ 2)
        assert.are.equal(128, l.in_features)
        assert.are.same({ 4, 128 }, l.weight.shape)
        local c = nn.Conv2d(1, 3 ^ 2, { 5.0, 5 }, 1, 2.0)
        assert.are.same({ 9, 1, 5, 5 }, c.weight.shape)
        assert.are.same({ 1, 9, 4, 4 }, c(tide.ones(1, 1, 4, 4)).shape)
        assert.are.equal(2, nn.LSTM(8 / 2, 16, 4 / 2).num_layers)
        local ok, e = pcall(nn.Linear, 2.5, 3)
        assert.is_false(ok)
        assert.matches("tide: Linear: expected in_features to be an integer >= 1, got 2.5", e)
    end)

    it("refuses a constructor call without a required argument, as Python's TypeError", function()
        local ok, e = pcall(nn.LayerNorm)
        assert.is_false(ok)
        assert.matches("tide: LayerNorm: missing its required argument normalized_shape " ..
            "%(argument #1, or {normalized_shape =}%)$", e)
        ok, e = pcall(nn.Conv2d, 1, 2, { stride = 2 })
        assert.matches("tide: Conv2d: missing its required argument kernel_size %(argument #3, " ..
            "or {kernel_size =}%)$", e)
        assert.are.same({ 4, 3 }, nn.Linear(3, { out_features = 4 }).weight.shape)
    end)
end)
