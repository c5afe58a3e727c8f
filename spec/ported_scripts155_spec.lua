-- ported_scripts155_spec.lua — facebookresearch/fairseq's model utilities: fairseq/utils.py
-- (make_positions, strip_pad, buffered_arange), fairseq/modules/sinusoidal_positional_embedding.py
-- (SinusoidalPositionalEmbedding: get_embedding, forward with incremental_state None, the weights
-- buffer rebuilt when max_pos grows), fairseq/modules/learned_positional_embedding.py
-- (LearnedPositionalEmbedding, an nn.Embedding subclass), fairseq/criterions/
-- label_smoothed_cross_entropy.py (label_smoothed_nll_loss) and fairseq/modules/layer_drop.py
-- (LayerDropModuleList), ported line for line at tiny sizes on fixed tokens and checked against
-- PyTorch 1.13's values. The Python line stands above each Lua line that differs from it.
-- fairseq's token ids and padding_idx (1) keep their values and arithmetic: make_positions
-- still gives padding_idx + 1, padding_idx + 2, ... (pads read padding_idx). Where such a value
-- indexes a tide tensor (index_select, F.embedding, gather: 1-based), it is passed as value + 1,
-- and an Embedding's padding row is row padding_idx + 1 (fairseq's row 1 is tide's row 2).
-- sequence_generator.py's pieces are not ported.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. fairseq/utils.py
---------------------------------------------------------------------------------------------
-- def make_positions(tensor, padding_idx: int, onnx_trace: bool = False):
local function make_positions(tensor, padding_idx)
    -- mask = tensor.ne(padding_idx).int()
    local mask = tensor:ne(padding_idx):int()
    -- return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx
    return (tide.cumsum(mask, 2):type_as(mask) * mask):long() + padding_idx
end

-- def strip_pad(tensor, pad):
local function strip_pad(tensor, pad)
    -- return tensor[tensor.ne(pad)]
    return tensor[tensor:ne(pad)]
end

-- buffered_arange.buf: a function attribute in Python, an upvalue here
local buffered_arange_buf
-- def buffered_arange(max, device="cpu"):
local function buffered_arange(max, device)
    -- if not hasattr(buffered_arange, "buf"):
    if buffered_arange_buf == nil then
        -- buffered_arange.buf = torch.LongTensor().to(device)
        buffered_arange_buf = tide.empty(0, { dtype = "int64", device = device or "cpu" })
    end
    if max > buffered_arange_buf:numel() then
        buffered_arange_buf:resize_(max)
        -- torch.arange(max, out=buffered_arange.buf)
        tide.arange(0, max, { out = buffered_arange_buf })
    end
    -- return buffered_arange.buf[:max]
    return buffered_arange_buf[{ { 1, max } }]
end

---------------------------------------------------------------------------------------------
-- 2. fairseq/modules/sinusoidal_positional_embedding.py
---------------------------------------------------------------------------------------------
-- class SinusoidalPositionalEmbedding(nn.Module):
local SinusoidalPositionalEmbedding = nn.Module:extend("SinusoidalPositionalEmbedding")

-- @staticmethod
-- def get_embedding(num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None):
function SinusoidalPositionalEmbedding.get_embedding(num_embeddings, embedding_dim, padding_idx)
    -- half_dim = embedding_dim // 2
    local half_dim = math.floor(embedding_dim / 2)
    local emb = math.log(10000) / (half_dim - 1)
    -- emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = tide.exp(tide.arange(0, half_dim, { dtype = "float32" }) * -emb)
    -- emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
    emb = tide.arange(0, num_embeddings, { dtype = "float32" }):unsqueeze(2) * emb:unsqueeze(1)
    -- emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
    emb = tide.cat({ tide.sin(emb), tide.cos(emb) }, 2):view(num_embeddings, -1)
    if embedding_dim % 2 == 1 then
        -- zero pad
        -- emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
        emb = tide.cat({ emb, tide.zeros(num_embeddings, 1) }, 2)
    end
    -- if padding_idx is not None:
    if padding_idx ~= nil then
        -- emb[padding_idx, :] = 0   (fairseq's row padding_idx is tide's row padding_idx + 1)
        emb[padding_idx + 1] = 0
    end
    return emb
end

-- def __init__(self, embedding_dim, padding_idx, init_size=1024, auto_expand=True):
function SinusoidalPositionalEmbedding:init(embedding_dim, padding_idx, init_size, auto_expand)
    init_size = init_size or 1024
    if auto_expand == nil then auto_expand = true end
    self.embedding_dim = embedding_dim
    -- self.padding_idx = padding_idx if padding_idx is not None else 0
    self.padding_idx = padding_idx or 0
    -- self.register_buffer("weights", SinusoidalPositionalEmbedding.get_embedding(
    --     init_size, embedding_dim, padding_idx), persistent=False)
    self:register_buffer("weights", SinusoidalPositionalEmbedding.get_embedding(
        init_size, embedding_dim, padding_idx), false)
    -- self.max_positions = int(1e5)
    self.max_positions = 100000
    self.auto_expand = auto_expand
    self.onnx_trace = false
end

-- def forward(self, input, incremental_state=None, timestep=None, positions=None):
-- GAP: incremental_state and the onnx_trace branches are not ported (the brief: state off)
function SinusoidalPositionalEmbedding:forward(input)
    -- bspair = torch.onnx.operators.shape_as_tensor(input)
    -- bsz, seq_len = bspair[0], bspair[1]
    local bsz, seq_len = input:size(1), input:size(2)
    local max_pos = self.padding_idx + 1 + seq_len
    local weights = self.weights

    if max_pos > self.weights:size(1) then
        -- weights = SinusoidalPositionalEmbedding.get_embedding(
        --     max_pos, self.embedding_dim, self.padding_idx).to(self.weights)
        weights = SinusoidalPositionalEmbedding.get_embedding(
            max_pos, self.embedding_dim, self.padding_idx):to(self.weights)
        if self.auto_expand then
            self.weights = weights
        end
    end

    -- positions = utils.make_positions(input, self.padding_idx, onnx_trace=self.onnx_trace)
    local positions = make_positions(input, self.padding_idx)
    -- return weights.index_select(0, positions.view(-1)).view(bsz, seq_len, -1).detach()
    -- (positions are fairseq's 0-based rows: + 1 for tide's index_select)
    return weights:index_select(1, positions:view(-1) + 1):view(bsz, seq_len, -1):detach()
end

---------------------------------------------------------------------------------------------
-- 3. fairseq/modules/learned_positional_embedding.py
---------------------------------------------------------------------------------------------
-- class LearnedPositionalEmbedding(nn.Embedding):
local LearnedPositionalEmbedding = nn.Embedding:extend("LearnedPositionalEmbedding")

-- def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int):
function LearnedPositionalEmbedding:init(num_embeddings, embedding_dim, padding_idx)
    -- super().__init__(num_embeddings, embedding_dim, padding_idx)
    -- (tide's padding_idx is the 1-based row: fairseq's padding token id padding_idx + 1)
    nn.Embedding.init(self, num_embeddings, embedding_dim,
        { padding_idx = padding_idx and padding_idx + 1 })
    -- fairseq's padding_idx (a token id), kept for make_positions and max_positions
    self.pad_token = padding_idx
    self.onnx_trace = false
    -- if self.padding_idx is not None:
    if self.pad_token ~= nil then
        -- self.max_positions = self.num_embeddings - self.padding_idx - 1
        self.max_positions = self.num_embeddings - self.pad_token - 1
    else
        self.max_positions = self.num_embeddings
    end
end

-- def forward(self, input, incremental_state=None, positions=None):
-- GAP: the incremental_state branch is not ported (the brief: state off)
function LearnedPositionalEmbedding:forward(input, positions)
    -- assert (positions is None) or (self.padding_idx is None), "If positions is ..."
    assert(positions == nil or self.pad_token == nil,
        "If positions is pre-computed then padding_idx should not be set.")
    if positions == nil then
        -- positions = utils.make_positions(input, self.padding_idx, onnx_trace=self.onnx_trace)
        positions = make_positions(input, self.pad_token)
    end
    -- return F.embedding(positions, self.weight, self.padding_idx, self.max_norm, ...)
    -- (fairseq's positions are 0-based rows: + 1; self.padding_idx is already tide's row)
    return F.embedding(positions + 1, self.weight, self.padding_idx, self.max_norm,
        self.norm_type, self.scale_grad_by_freq, self.sparse)
end

---------------------------------------------------------------------------------------------
-- 4. fairseq/criterions/label_smoothed_cross_entropy.py
---------------------------------------------------------------------------------------------
-- def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
local function label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index, reduce)
    if reduce == nil then reduce = true end
    -- if target.dim() == lprobs.dim() - 1:
    if target:dim() == lprobs:dim() - 1 then
        -- target = target.unsqueeze(-1)
        target = target:unsqueeze(-1)
    end
    -- nll_loss = -lprobs.gather(dim=-1, index=target)   (target: fairseq's 0-based ids, + 1)
    local nll_loss = -lprobs:gather(-1, target + 1)
    -- smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    local smooth_loss = -lprobs:sum({ dim = -1, keepdim = true })
    -- if ignore_index is not None:
    if ignore_index ~= nil then
        local pad_mask = target:eq(ignore_index)
        nll_loss:masked_fill_(pad_mask, 0.0)
        smooth_loss:masked_fill_(pad_mask, 0.0)
    else
        -- nll_loss = nll_loss.squeeze(-1)
        nll_loss = nll_loss:squeeze(-1)
        -- smooth_loss = smooth_loss.squeeze(-1)
        smooth_loss = smooth_loss:squeeze(-1)
    end
    if reduce then
        -- nll_loss = nll_loss.sum()
        nll_loss = nll_loss:sum()
        -- smooth_loss = smooth_loss.sum()
        smooth_loss = smooth_loss:sum()
    end
    -- eps_i = epsilon / (lprobs.size(-1) - 1)
    local eps_i = epsilon / (lprobs:size(-1) - 1)
    local loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss
end

---------------------------------------------------------------------------------------------
-- 5. fairseq/modules/layer_drop.py
---------------------------------------------------------------------------------------------
-- class LayerDropModuleList(nn.ModuleList):
local LayerDropModuleList = nn.ModuleList:extend("LayerDropModuleList")

-- def __init__(self, p, modules=None):
function LayerDropModuleList:init(p, modules)
    -- super().__init__(modules)
    nn.ModuleList.init(self, modules)
    self.p = p
end

-- def __iter__(self):
-- GAP: Lua has no __iter__ hook that ipairs honours on 5.4: `for layer in layers` is
-- `for layer in layers:iter()` here (ipairs(layers) still walks every layer)
function LayerDropModuleList:iter()
    -- dropout_probs = torch.empty(len(self)).uniform_()
    local dropout_probs = tide.empty(#self):uniform_()
    local kept = {}
    -- for i, m in enumerate(super().__iter__()):
    for i, m in ipairs(self) do
        -- if not self.training or (dropout_probs[i] > self.p):
        -- GAP: :item(): Lua 5.1 and LuaJIT call no metamethod for `tensor > number`
        if not self.training or dropout_probs[i]:item() > self.p then
            -- yield m
            kept[#kept + 1] = m
        end
    end
    local k = 0
    return function()
        k = k + 1
        return kept[k]
    end
end

---------------------------------------------------------------------------------------------
-- tests: fixed tokens, PyTorch 1.13's values (/tmp script with the Python functions above)
---------------------------------------------------------------------------------------------
local PAD = 1
-- fairseq token ids, padding right, left and in the middle
local function tokens()
    return tide.tensor({ { 5, 6, 7, 1, 1 }, { 1, 1, 4, 8, 3 }, { 4, 1, 8, 9, 3 } },
        { dtype = "int64" })
end

describe("ported fairseq utils, positional embeddings, label smoothing, LayerDrop", function()
    it("make_positions, strip_pad and buffered_arange keep fairseq's values", function()
        local pos = make_positions(tokens(), PAD)
        assert.equals("int64", pos.dtype)
        assert.same({ { 2, 3, 4, 1, 1 }, { 1, 1, 2, 3, 4 }, { 2, 1, 3, 4, 5 } }, pos:tolist())
        assert.same({ 5, 6, 7, 4, 8, 3, 4, 8, 9, 3 }, strip_pad(tokens(), PAD):tolist())
        assert.same({ 0, 1, 2 }, buffered_arange(3):tolist())
        local grown = buffered_arange(5)
        assert.same({ 0, 1, 2, 3, 4 }, grown:tolist())
        assert.equals(5, buffered_arange_buf:numel())
        -- a shorter request is a view of the same buffer
        local short = buffered_arange(2)
        assert.same({ 0, 1 }, short:tolist())
        short[1] = 7
        assert.equals(7, grown[1]:item())
        buffered_arange_buf = nil
    end)

    it("SinusoidalPositionalEmbedding: get_embedding and forward as PyTorch's", function()
        local w0 = SinusoidalPositionalEmbedding.get_embedding(4, 5, PAD)
        local want_w0 = { 0, 0, 1, 1, 0, 0, 0, 0, 0, 0,
            0.9092974066734314, 0.0001999999803956598, -0.416146844625473, 1.0, 0.0,
            0.14112000167369843, 0.0002999999560415745, -0.9899924993515015, 0.9999999403953552,
            0.0 }
        assert_close_list(want_w0, w0:view(-1):tolist(), 1e-6, "get_embedding")
        -- init_size 4 < padding_idx + 1 + seq_len = 7: forward rebuilds the weights buffer
        local m = SinusoidalPositionalEmbedding(5, PAD, 4)
        local out = m(tokens())
        assert.same({ 3, 5, 5 }, out:size())
        assert.is_false(out.requires_grad)
        assert.same({ 7, 5 }, m.weights:size())
        -- the module's buffer is the rebuilt one (self.weights = weights)
        assert.equals(m.weights, m:buffers()[1])
        local r2 = { 0.9092974066734314, 0.0001999999803956598, -0.416146844625473, 1.0, 0.0 }
        local r3 = { 0.14112000167369843, 0.0002999999560415745, -0.9899924993515015,
            0.9999999403953552, 0.0 }
        local r4 = { -0.756802499294281, 0.0003999999607913196, -0.6536436080932617,
            0.9999999403953552, 0.0 }
        local r5 = { -0.9589242935180664, 0.0004999999655410647, 0.28366219997406006,
            0.9999998807907104, 0.0 }
        local z = { 0, 0, 0, 0, 0 }
        local want = {}
        for _, row in ipairs({ r2, r3, r4, z, z, z, z, r2, r3, r4, r2, z, r3, r4, r5 }) do
            for _, v in ipairs(row) do want[#want + 1] = v end
        end
        assert_close_list(want, out:view(-1):tolist(), 1e-6, "sinusoidal forward")
        -- persistent=False: not in the state_dict
        assert.is_nil(m:state_dict().weights)
        -- auto_expand=False leaves the buffer as it was
        local m2 = SinusoidalPositionalEmbedding(5, PAD, 4, false)
        assert_close_list(want, m2(tokens()):view(-1):tolist(), 1e-6, "no auto_expand")
        assert.same({ 4, 5 }, m2.weights:size())
    end)

    it("LearnedPositionalEmbedding: the values and the weight's gradient as PyTorch's", function()
        local emb = LearnedPositionalEmbedding(8, 3, PAD)
        assert.equals(6, emb.max_positions)
        assert.equals(2, emb.padding_idx)
        assert.same({ 0, 0, 0 }, emb.weight[2]:tolist())
        tide.no_grad(function()
            emb.weight:copy_(tide.sin(tide.arange(0, 24, { dtype = "float32" }):view(8, 3) * 0.7))
            emb.weight[2] = 0
        end)
        local out = emb(tokens())
        assert.same({ 3, 5, 3 }, out:size())
        local p2 = { -0.871575653553009, -0.9824525713920593, -0.631266713142395 }
        local p3 = { 0.0168136153370142, 0.6569865942001343, 0.9881681799888611 }
        local p4 = { 0.854599118232727, 0.31909891963005066, -0.3664793074131012 }
        local p5 = { -0.8796957731246948, -0.9791777729988098, -0.6181374192237854 }
        local z = { 0, 0, 0 }
        local want = {}
        for _, row in ipairs({ p2, p3, p4, z, z, z, z, p2, p3, p4, p2, z, p3, p4, p5 }) do
            for _, v in ipairs(row) do want[#want + 1] = v end
        end
        assert_close_list(want, out:view(-1):tolist(), 1e-6, "learned forward")
        out:pow(2):sum():backward()
        local want_g = { 0, 0, 0, 0, 0, 0,
            -5.229454040527344, -5.894715309143066, -3.78760027885437,
            0.10088169574737549, 3.9419195652008057, 5.929008960723877,
            5.127594947814941, 1.9145934581756592, -2.198875904083252,
            -1.7593915462493896, -1.9583555459976196, -1.2362748384475708, 0, 0, 0, 0, 0, 0 }
        assert_close_list(want_g, emb.weight.grad:view(-1):tolist(), 1e-5, "learned grad")
    end)

    describe("label_smoothed_nll_loss", function()
        local want_lp = { -2.4066851139068604, -0.4795686900615692, -1.3756822347640991,
            -3.782217264175415, -4.1735944747924805, -1.986304521560669, -0.4194578528404236,
            -1.7783467769622803, -4.072196960449219, -3.94051194190979, -1.5762946605682373,
            -0.4430846571922302, -2.201120376586914, -4.274876594543457, -3.626296281814575,
            -1.199578046798706, -0.5530666708946228, -2.6279280185699463, -4.384488582611084,
            -3.2493815422058105, -0.8855640292167664, -0.7560243010520935, -3.050558090209961,
            -4.407670974731445, -2.83918833732605, -0.6582299470901489, -1.0517274141311646,
            -3.4584927558898926, -4.352612495422363, -2.4242005348205566 }
        local function inputs()
            local logits = tide.sin(tide.arange(0, 30, { dtype = "float32" }):view(2, 3, 5) * 1.3)
                * 2
            local lprobs = F.log_softmax(logits, -1):detach():requires_grad_()
            -- fairseq's target ids; id 1 (padding_idx) is ignored
            local target = tide.tensor({ { 4, 1, 0 }, { 2, 3, 1 } }, { dtype = "int64" })
            return lprobs, target
        end

        it("reduce=True: loss, nll_loss and d loss / d lprobs as PyTorch's", function()
            local lprobs, target = inputs()
            assert_close_list(want_lp, lprobs:view(-1):tolist(), 1e-5, "lprobs")
            local loss, nll = label_smoothed_nll_loss(lprobs, target, 0.1, PAD, true)
            assert.equals(0, loss:dim())
            assert_close_list({ 12.394623756408691, 12.78548812866211 },
                { loss:item(), nll:item() }, 1e-5, "reduced")
            loss:backward()
            local a, b = -0.02500000037252903, -0.8999999761581421
            assert_close_list({ a, a, a, a, b, 0, 0, 0, 0, 0, b, a, a, a, a,
                a, a, b, a, a, a, a, a, b, a, 0, 0, 0, 0, 0 },
                lprobs.grad:view(-1):tolist(), 1e-6, "grad")
        end)

        it("reduce=False with and without ignore_index as PyTorch's", function()
            local lprobs, target = inputs()
            local loss, nll = label_smoothed_nll_loss(lprobs, target, 0.1, PAD, false)
            assert.same({ 2, 3, 1 }, loss:size())
            assert_close_list({ 3.957338809967041, 0, 1.6822996139526367, 2.5997982025146484,
                4.155187129974365, 0 }, loss:view(-1):tolist(), 1e-5, "loss")
            assert_close_list({ 4.1735944747924805, 0, 1.5762946605682373, 2.6279280185699463,
                4.407670974731445, 0 }, nll:view(-1):tolist(), 1e-5, "nll")
            local weighted = loss * tide.arange(0, 6, { dtype = "float32" }):view(2, 3, 1)
            weighted:sum():backward()
            local g = lprobs.grad:view(-1):tolist()
            assert_close_list({ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                -1.7999999523162842, -0.05, -0.05, -0.05, -0.05,
                -0.075, -0.075, -2.700000047683716, -0.075, -0.075,
                -0.1, -0.1, -0.1, -3.5999999046325684, -0.1, 0, 0, 0, 0, 0 }, g, 1e-6, "grad")
            local loss2 = label_smoothed_nll_loss(lprobs:detach(), target, 0.1, nil, false)
            assert.same({ 2, 3 }, loss2:size())
            assert_close_list({ 3.957338809967041, 0.6719460487365723, 1.6822996139526367,
                2.5997982025146484, 4.155187129974365, 1.218893051147461 },
                loss2:view(-1):tolist(), 1e-5, "no ignore_index")
        end)
    end)

    it("LayerDropModuleList keeps the layers whose draw exceeds p; eval keeps all", function()
        local layers = LayerDropModuleList(0.5, { nn.Linear(2, 2), nn.Linear(2, 2),
            nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2) })
        assert.equals(6, #layers)
        assert.equals(12, #layers:parameters())
        -- the fixed draw: the same seed read back
        tide.manual_seed(155)
        local draws = tide.empty(6):uniform_():tolist()
        local want = {}
        for i = 1, 6 do
            if draws[i] > 0.5 then want[#want + 1] = layers[i] end
        end
        assert.is_true(#want > 0 and #want < 6, "the seed should drop some layers, not all")
        tide.manual_seed(155)
        local got = {}
        for layer in layers:iter() do got[#got + 1] = layer end
        assert.equals(#want, #got)
        for i = 1, #want do assert.equals(want[i], got[i]) end
        layers.p = 1.0
        assert.is_nil(layers:iter()())
        layers:eval()
        local n = 0
        for _ in layers:iter() do n = n + 1 end
        assert.equals(6, n)
    end)
end)
