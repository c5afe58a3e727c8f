-- ported_scripts112_spec.lua — sooftware/conformer's conformer/ package: activation.py (Swish,
-- GLU), embedding.py (RelPositionalEncoding), attention.py (RelativeMultiHeadAttention with its
-- u_bias / v_bias parameters and _relative_shift's zero-pad / view / slice trick,
-- MultiHeadedSelfAttentionModule), convolution.py (DepthwiseConv1d, PointwiseConv1d,
-- ConformerConvModule, Conv2dSubampling), feed_forward.py (FeedForwardModule), modules.py
-- (ResidualConnectionModule, Linear with xavier init, View, Transpose), encoder.py
-- (ConformerBlock, ConformerEncoder with its input_lengths arithmetic) and model.py (Conformer
-- with its fc and log_softmax), ported line for line at tiny sizes (input_dim 8, encoder_dim 8,
-- one block, 2 heads, expansion factors 2, kernel 3, dropouts 0, a batch of 2 of lengths 12
-- and 9), then 2 Adam steps on nn.CTCLoss. The Python line stands above each Lua line that
-- differs from it. Dims and class targets are 1-based (CTC's blank is class 1, PyTorch's 0).
-- Values: PyTorch 1.13 on the same weights (a formula over each parameter's index in
-- named_parameters order) and inputs, BatchNorm in eval mode for the value checks.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
-- import torch.nn.init as init
local init = nn.init
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- PyTorch 1.13's values for the same weights and inputs
local REF = {
    -- _relative_shift(torch.arange(60).float().view(2, 2, 3, 5))
    shift = { 2, 3, 4, 6, 7, 8, 10, 11, 12, 17, 18, 19, 21, 22, 23, 25, 26, 27, 32, 33, 34, 36,
        37, 38, 40, 41, 42, 47, 48, 49, 51, 52, 53, 55, 56, 57 },
    attn_names = { "layer_norm.weight", "layer_norm.bias", "attention.u_bias",
        "attention.v_bias", "attention.query_proj.linear.weight",
        "attention.query_proj.linear.bias", "attention.key_proj.linear.weight",
        "attention.key_proj.linear.bias", "attention.value_proj.linear.weight",
        "attention.value_proj.linear.bias", "attention.pos_proj.linear.weight",
        "attention.out_proj.linear.weight", "attention.out_proj.linear.bias" },
    -- MultiHeadedSelfAttentionModule(8, 2, 0.0) output: sum, sum of |.|, first six entries
    attn = { -9.52476692199707, 22.732088088989258,
        { -0.3174747, -0.4954947, -0.4843405, -0.3038328, -0.0457644, 0.172924 } },
    -- the same with mask[1, :, 3:] = True (batch 2's last two keys masked): sums, batch 2's first
    -- four entries
    masked = { -9.466675758361816, 22.626501083374023,
        { -0.3064518, -0.4790273, -0.4654982, -0.2861283 } },
    n_params = 43,
    count = 2040,
    first_names = { "encoder.conv_subsample.sequential.0.weight",
        "encoder.conv_subsample.sequential.0.bias", "encoder.conv_subsample.sequential.2.weight",
        "encoder.conv_subsample.sequential.2.bias", "encoder.input_projection.0.linear.weight",
        "encoder.input_projection.0.linear.bias",
        "encoder.layers.0.sequential.0.module.sequential.0.weight" },
    last_names = { "encoder.layers.0.sequential.2.module.sequential.4.conv.weight",
        "encoder.layers.0.sequential.2.module.sequential.5.weight" },
    enc = { 0.0557338, -0.1425229, 0.173113, 0.2985301, -0.1469475, -0.4473418, -0.2860484,
        -0.3965279, -0.002968, -0.1646813, 0.1723598, 0.2951432, -0.1569349, -0.460943,
        -0.2971161, -0.389259, 0.0526634, -0.1349997, 0.1770183, 0.293455, -0.1515431,
        -0.4437722, -0.2800741, -0.4010631, 0.0490472, -0.1350647, 0.1775755, 0.292471,
        -0.1528658, -0.444009, -0.2797359, -0.4013989 },
    out_lengths = { 2, 1 },
    logp = { -1.6442552, -1.5651839, -1.5481697, -1.596386, -1.7008423, -1.6533304, -1.5709646,
        -1.5488452, -1.5910969, -1.6898415, -1.6435181, -1.5647299, -1.548131, -1.5968168,
        -1.7017097, -1.6438658, -1.5649558, -1.5481604, -1.5966117, -1.7012757 },
    -- nn.CTCLoss() before each of 2 Adam(lr=1e-2) steps and after them (train mode)
    loss = { 1.585085391998291, 1.541854977607727, 1.5059027671813965 },
}

---------------------------------------------------------------------------------------------
-- activation.py
---------------------------------------------------------------------------------------------
-- class Swish(nn.Module):
local Swish = nn.Module:extend("Swish")
function Swish:forward(inputs)
    -- return inputs * inputs.sigmoid()
    return inputs * inputs:sigmoid()
end

-- class GLU(nn.Module):
local GLU = nn.Module:extend("GLU")
-- def __init__(self, dim: int) -> None:
nn.signature(GLU, "self, dim: int")
function GLU:init(dim)
    self.dim = dim
end
function GLU:forward(inputs)
    -- outputs, gate = inputs.chunk(2, dim=self.dim)
    local outputs, gate = unpack(inputs:chunk(2, self.dim))
    -- return outputs * gate.sigmoid()
    return outputs * gate:sigmoid()
end

---------------------------------------------------------------------------------------------
-- embedding.py
---------------------------------------------------------------------------------------------
-- class RelPositionalEncoding(nn.Module):
local RelPositionalEncoding = nn.Module:extend("RelPositionalEncoding")
-- def __init__(self, d_model: int = 512, max_len: int = 5000) -> None:
nn.signature(RelPositionalEncoding, "self, d_model: int = 512, max_len: int = 5000")
function RelPositionalEncoding:init(d_model, max_len)
    self.d_model = d_model
    -- self.pe = None
    self.pe = nil
    -- self.extend_pe(torch.tensor(0.0).expand(1, max_len))
    -- (the dtype named: Lua 5.1 and LuaJIT have no float subtype, and tide.tensor(0.0) there
    -- infers int64, which extend_pe's pe.to(dtype=x.dtype) would truncate to)
    self:extend_pe(tide.tensor(0.0, { dtype = "float32" }):expand(1, max_len))
end

-- def extend_pe(self, x: Tensor) -> None:
function RelPositionalEncoding:extend_pe(x)
    -- if self.pe is not None:
    if self.pe ~= nil then
        -- if self.pe.size(1) >= x.size(1) * 2 - 1:
        if self.pe:size(2) >= x:size(2) * 2 - 1 then
            -- if self.pe.dtype != x.dtype or self.pe.device != x.device:
            if self.pe.dtype ~= x.dtype or self.pe.device ~= x.device then
                -- self.pe = self.pe.to(dtype=x.dtype, device=x.device)
                self.pe = self.pe:to({ dtype = x.dtype, device = x.device })
            end
            return
        end
    end

    -- pe_positive = torch.zeros(x.size(1), self.d_model)
    local pe_positive = tide.zeros(x:size(2), self.d_model)
    -- pe_negative = torch.zeros(x.size(1), self.d_model)
    local pe_negative = tide.zeros(x:size(2), self.d_model)
    -- position = torch.arange(0, x.size(1), dtype=torch.float32).unsqueeze(1)
    local position = tide.arange(0, x:size(2), { dtype = "float32" }):unsqueeze(2)
    -- div_term = torch.exp(
    --     torch.arange(0, self.d_model, 2, dtype=torch.float32)
    --     * -(math.log(10000.0) / self.d_model)
    -- )
    local div_term = tide.exp(
        tide.arange(0, self.d_model, 2, { dtype = "float32" }) * -(math.log(10000.0) / self.d_model)
    )
    -- pe_positive[:, 0::2] = torch.sin(position * div_term)
    pe_positive[{ {}, { 1, -1, 2 } }] = tide.sin(position * div_term)
    -- pe_positive[:, 1::2] = torch.cos(position * div_term)
    pe_positive[{ {}, { 2, -1, 2 } }] = tide.cos(position * div_term)
    -- pe_negative[:, 0::2] = torch.sin(-1 * position * div_term)
    pe_negative[{ {}, { 1, -1, 2 } }] = tide.sin(-1 * position * div_term)
    -- pe_negative[:, 1::2] = torch.cos(-1 * position * div_term)
    pe_negative[{ {}, { 2, -1, 2 } }] = tide.cos(-1 * position * div_term)

    -- pe_positive = torch.flip(pe_positive, [0]).unsqueeze(0)
    pe_positive = tide.flip(pe_positive, { 1 }):unsqueeze(1)
    -- pe_negative = pe_negative[1:].unsqueeze(0)
    pe_negative = pe_negative[{ { 2, -1 } }]:unsqueeze(1)
    -- pe = torch.cat([pe_positive, pe_negative], dim=1)
    local pe = tide.cat({ pe_positive, pe_negative }, 2)
    -- self.pe = pe.to(device=x.device, dtype=x.dtype)
    self.pe = pe:to({ device = x.device, dtype = x.dtype })
end

function RelPositionalEncoding:forward(x)
    self:extend_pe(x)
    -- pos_emb = self.pe[
    --     :,
    --     self.pe.size(1) // 2 - x.size(1) + 1 : self.pe.size(1) // 2 + x.size(1),
    -- ]
    -- (Python's a:b is Lua's {a + 1, b}; // is Lua 5.3's, math.floor for 5.1 and LuaJIT)
    local half = math.floor(self.pe:size(2) / 2)
    local pos_emb = self.pe[{
        {},
        { half - x:size(2) + 2, half + x:size(2) },
    }]
    return pos_emb
end

---------------------------------------------------------------------------------------------
-- modules.py
---------------------------------------------------------------------------------------------
-- class ResidualConnectionModule(nn.Module):
local ResidualConnectionModule = nn.Module:extend("ResidualConnectionModule")
-- def __init__(self, module: nn.Module, module_factor: float = 1.0, input_factor: float = 1.0):
nn.signature(ResidualConnectionModule,
    "self, module: nn.Module, module_factor: float = 1.0, input_factor: float = 1.0")
function ResidualConnectionModule:init(module, module_factor, input_factor)
    self.module = module
    self.module_factor = module_factor
    self.input_factor = input_factor
end
function ResidualConnectionModule:forward(inputs)
    -- return (self.module(inputs) * self.module_factor) + (inputs * self.input_factor)
    return (self.module(inputs) * self.module_factor) + (inputs * self.input_factor)
end

-- class Linear(nn.Module):
local Linear = nn.Module:extend("Linear")
-- def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
nn.signature(Linear, "self, in_features: int, out_features: int, bias: bool = True")
function Linear:init(in_features, out_features, bias)
    -- self.linear = nn.Linear(in_features, out_features, bias=bias)
    self.linear = nn.Linear(in_features, out_features, { bias = bias })
    -- init.xavier_uniform_(self.linear.weight)
    init.xavier_uniform_(self.linear.weight)
    if bias then
        -- init.zeros_(self.linear.bias)
        init.zeros_(self.linear.bias)
    end
end
function Linear:forward(x)
    return self.linear(x)
end

-- class View(nn.Module):
local View = nn.Module:extend("View")
-- def __init__(self, shape: tuple, contiguous: bool = False):
nn.signature(View, "self, shape: tuple, contiguous: bool = False")
function View:init(shape, contiguous)
    self.shape = shape
    self.contiguous = contiguous
end
function View:forward(x)
    if self.contiguous then
        x = x:contiguous()
    end
    -- return x.view(*self.shape)
    return x:view(unpack(self.shape))
end

-- class Transpose(nn.Module):
local Transpose = nn.Module:extend("Transpose")
-- def __init__(self, shape: tuple):
nn.signature(Transpose, "self, shape: tuple")
function Transpose:init(shape)
    self.shape = shape
end
function Transpose:forward(x)
    -- return x.transpose(*self.shape)
    return x:transpose(unpack(self.shape))
end

---------------------------------------------------------------------------------------------
-- attention.py
---------------------------------------------------------------------------------------------
-- class RelativeMultiHeadAttention(nn.Module):
local RelativeMultiHeadAttention = nn.Module:extend("RelativeMultiHeadAttention")
-- def __init__(self, d_model: int = 512, num_heads: int = 16, dropout_p: float = 0.1):
nn.signature(RelativeMultiHeadAttention,
    "self, d_model: int = 512, num_heads: int = 16, dropout_p: float = 0.1")
function RelativeMultiHeadAttention:init(d_model, num_heads, dropout_p)
    -- assert d_model % num_heads == 0, "d_model % num_heads should be zero."
    assert(d_model % num_heads == 0, "d_model % num_heads should be zero.")
    self.d_model = d_model
    -- self.d_head = int(d_model / num_heads)
    self.d_head = math.floor(d_model / num_heads)
    self.num_heads = num_heads
    self.sqrt_dim = math.sqrt(self.d_head)

    self.query_proj = Linear(d_model, d_model)
    self.key_proj = Linear(d_model, d_model)
    self.value_proj = Linear(d_model, d_model)
    -- self.pos_proj = Linear(d_model, d_model, bias=False)
    self.pos_proj = Linear(d_model, d_model, { bias = false })

    -- self.dropout = nn.Dropout(p=dropout_p)
    self.dropout = nn.Dropout({ p = dropout_p })
    -- self.u_bias = nn.Parameter(torch.Tensor(self.num_heads, self.d_head))
    self.u_bias = nn.Parameter(tide.Tensor(self.num_heads, self.d_head))
    -- self.v_bias = nn.Parameter(torch.Tensor(self.num_heads, self.d_head))
    self.v_bias = nn.Parameter(tide.Tensor(self.num_heads, self.d_head))
    -- torch.nn.init.xavier_uniform_(self.u_bias)
    nn.init.xavier_uniform_(self.u_bias)
    -- torch.nn.init.xavier_uniform_(self.v_bias)
    nn.init.xavier_uniform_(self.v_bias)

    self.out_proj = Linear(d_model, d_model)
end

-- def forward(self, query, key, value, pos_embedding, mask: Optional[Tensor] = None) -> Tensor:
function RelativeMultiHeadAttention:forward(query, key, value, pos_embedding, mask)
    -- batch_size = value.size(0)
    local batch_size = value:size(1)

    -- query = self.query_proj(query).view(batch_size, -1, self.num_heads, self.d_head)
    query = self.query_proj(query):view(batch_size, -1, self.num_heads, self.d_head)
    -- key = self.key_proj(key).view(batch_size, -1, self.num_heads, self.d_head)
    --     .permute(0, 2, 1, 3)
    key = self.key_proj(key):view(batch_size, -1, self.num_heads, self.d_head)
        :permute(1, 3, 2, 4)
    -- value = self.value_proj(value).view(batch_size, -1, self.num_heads, self.d_head)
    --     .permute(0, 2, 1, 3)
    value = self.value_proj(value):view(batch_size, -1, self.num_heads, self.d_head)
        :permute(1, 3, 2, 4)
    -- pos_embedding = self.pos_proj(pos_embedding).view(batch_size, -1, self.num_heads,
    --     self.d_head)
    pos_embedding = self.pos_proj(pos_embedding):view(batch_size, -1, self.num_heads,
        self.d_head)

    -- content_score = torch.matmul((query + self.u_bias).transpose(1, 2), key.transpose(2, 3))
    local content_score = tide.matmul((query + self.u_bias):transpose(2, 3), key:transpose(3, 4))
    -- pos_score = torch.matmul((query + self.v_bias).transpose(1, 2),
    --     pos_embedding.permute(0, 2, 3, 1))
    local pos_score = tide.matmul((query + self.v_bias):transpose(2, 3),
        pos_embedding:permute(1, 3, 4, 2))
    pos_score = self:_relative_shift(pos_score)

    local score = (content_score + pos_score) / self.sqrt_dim

    if mask ~= nil then
        -- mask = mask.unsqueeze(1)
        mask = mask:unsqueeze(2)
        -- score.masked_fill_(mask, -1e9)
        score:masked_fill_(mask, -1e9)
    end

    -- attn = F.softmax(score, -1)
    local attn = F.softmax(score, -1)
    attn = self.dropout(attn)

    -- context = torch.matmul(attn, value).transpose(1, 2)
    local context = tide.matmul(attn, value):transpose(2, 3)
    -- context = context.contiguous().view(batch_size, -1, self.d_model)
    context = context:contiguous():view(batch_size, -1, self.d_model)

    return self.out_proj(context)
end

-- def _relative_shift(self, pos_score: Tensor) -> Tensor:
function RelativeMultiHeadAttention:_relative_shift(pos_score)
    -- batch_size, num_heads, seq_length1, seq_length2 = pos_score.size()
    local batch_size, num_heads, seq_length1, seq_length2 = unpack(pos_score:size())
    -- zeros = pos_score.new_zeros(batch_size, num_heads, seq_length1, 1)
    local zeros = pos_score:new_zeros(batch_size, num_heads, seq_length1, 1)
    -- padded_pos_score = torch.cat([zeros, pos_score], dim=-1)
    local padded_pos_score = tide.cat({ zeros, pos_score }, -1)

    -- padded_pos_score = padded_pos_score.view(batch_size, num_heads, seq_length2 + 1,
    --     seq_length1)
    padded_pos_score = padded_pos_score:view(batch_size, num_heads, seq_length2 + 1, seq_length1)
    -- pos_score = padded_pos_score[:, :, 1:].view_as(pos_score)[:, :, :, : seq_length2 // 2 + 1]
    pos_score = padded_pos_score[{ {}, {}, { 2, -1 } }]:view_as(pos_score)
        [{ {}, {}, {}, { 1, math.floor(seq_length2 / 2) + 1 } }]

    return pos_score
end

-- class MultiHeadedSelfAttentionModule(nn.Module):
local MultiHeadedSelfAttentionModule = nn.Module:extend("MultiHeadedSelfAttentionModule")
-- def __init__(self, d_model: int, num_heads: int, dropout_p: float = 0.1):
nn.signature(MultiHeadedSelfAttentionModule,
    "self, d_model: int, num_heads: int, dropout_p: float = 0.1")
function MultiHeadedSelfAttentionModule:init(d_model, num_heads, dropout_p)
    self.positional_encoding = RelPositionalEncoding(d_model)
    self.layer_norm = nn.LayerNorm(d_model)
    self.attention = RelativeMultiHeadAttention(d_model, num_heads, dropout_p)
    -- self.dropout = nn.Dropout(p=dropout_p)
    self.dropout = nn.Dropout({ p = dropout_p })
end

-- def forward(self, inputs: Tensor, mask: Optional[Tensor] = None):
function MultiHeadedSelfAttentionModule:forward(inputs, mask)
    -- batch_size = inputs.size(0)
    local batch_size = inputs:size(1)
    local pos_embedding = self.positional_encoding(inputs)
    -- pos_embedding = pos_embedding.repeat(batch_size, 1, 1)
    pos_embedding = pos_embedding["repeat"](pos_embedding, batch_size, 1, 1)

    inputs = self.layer_norm(inputs)
    -- outputs = self.attention(inputs, inputs, inputs, pos_embedding=pos_embedding, mask=mask)
    local outputs = self.attention(inputs, inputs, inputs, pos_embedding, mask)

    return self.dropout(outputs)
end

---------------------------------------------------------------------------------------------
-- convolution.py
---------------------------------------------------------------------------------------------
-- class DepthwiseConv1d(nn.Module):
local DepthwiseConv1d = nn.Module:extend("DepthwiseConv1d")
nn.signature(DepthwiseConv1d, "self, in_channels: int, out_channels: int, kernel_size: int, "
    .. "stride: int = 1, padding: int = 0, bias: bool = False")
function DepthwiseConv1d:init(in_channels, out_channels, kernel_size, stride, padding, bias)
    -- assert out_channels % in_channels == 0,
    --     "out_channels should be constant multiple of in_channels"
    assert(out_channels % in_channels == 0,
        "out_channels should be constant multiple of in_channels")
    self.conv = nn.Conv1d({
        in_channels = in_channels,
        out_channels = out_channels,
        kernel_size = kernel_size,
        groups = in_channels,
        stride = stride,
        padding = padding,
        bias = bias,
    })
end
function DepthwiseConv1d:forward(inputs)
    return self.conv(inputs)
end

-- class PointwiseConv1d(nn.Module):
local PointwiseConv1d = nn.Module:extend("PointwiseConv1d")
nn.signature(PointwiseConv1d, "self, in_channels: int, out_channels: int, stride: int = 1, "
    .. "padding: int = 0, bias: bool = True")
function PointwiseConv1d:init(in_channels, out_channels, stride, padding, bias)
    self.conv = nn.Conv1d({
        in_channels = in_channels,
        out_channels = out_channels,
        kernel_size = 1,
        stride = stride,
        padding = padding,
        bias = bias,
    })
end
function PointwiseConv1d:forward(inputs)
    return self.conv(inputs)
end

-- class ConformerConvModule(nn.Module):
local ConformerConvModule = nn.Module:extend("ConformerConvModule")
nn.signature(ConformerConvModule, "self, in_channels: int, kernel_size: int = 31, "
    .. "expansion_factor: int = 2, dropout_p: float = 0.1")
function ConformerConvModule:init(in_channels, kernel_size, expansion_factor, dropout_p)
    -- assert (kernel_size - 1) % 2 == 0, "kernel_size should be a odd number for 'SAME' padding"
    assert((kernel_size - 1) % 2 == 0, "kernel_size should be a odd number for 'SAME' padding")
    -- assert expansion_factor == 2, "Currently, Only Supports expansion_factor 2"
    assert(expansion_factor == 2, "Currently, Only Supports expansion_factor 2")

    self.sequential = nn.Sequential(
        nn.LayerNorm(in_channels),
        -- Transpose(shape=(1, 2)),
        Transpose({ shape = { 2, 3 } }),
        -- PointwiseConv1d(in_channels, in_channels * expansion_factor, stride=1, padding=0,
        --     bias=True),
        PointwiseConv1d(in_channels, in_channels * expansion_factor,
            { stride = 1, padding = 0, bias = true }),
        -- GLU(dim=1),
        GLU({ dim = 2 }),
        -- DepthwiseConv1d(in_channels, in_channels, kernel_size, stride=1,
        --     padding=(kernel_size - 1) // 2),
        DepthwiseConv1d(in_channels, in_channels, kernel_size,
            { stride = 1, padding = math.floor((kernel_size - 1) / 2) }),
        nn.BatchNorm1d(in_channels),
        Swish(),
        -- PointwiseConv1d(in_channels, in_channels, stride=1, padding=0, bias=True),
        PointwiseConv1d(in_channels, in_channels, { stride = 1, padding = 0, bias = true }),
        -- nn.Dropout(p=dropout_p),
        nn.Dropout({ p = dropout_p })
    )
end
function ConformerConvModule:forward(inputs)
    -- return self.sequential(inputs).transpose(1, 2)
    return self.sequential(inputs):transpose(2, 3)
end

-- class Conv2dSubampling(nn.Module):
local Conv2dSubampling = nn.Module:extend("Conv2dSubampling")
nn.signature(Conv2dSubampling, "self, in_channels: int, out_channels: int")
function Conv2dSubampling:init(in_channels, out_channels)
    self.sequential = nn.Sequential(
        -- nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2),
        nn.Conv2d(in_channels, out_channels, { kernel_size = 3, stride = 2 }),
        nn.ReLU(),
        -- nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=2),
        nn.Conv2d(out_channels, out_channels, { kernel_size = 3, stride = 2 }),
        nn.ReLU()
    )
end
-- def forward(self, inputs: Tensor, input_lengths: Tensor) -> Tuple[Tensor, Tensor]:
function Conv2dSubampling:forward(inputs, input_lengths)
    -- outputs = self.sequential(inputs.unsqueeze(1))
    local outputs = self.sequential(inputs:unsqueeze(2))
    -- batch_size, channels, subsampled_lengths, sumsampled_dim = outputs.size()
    local batch_size, channels, subsampled_lengths, sumsampled_dim = unpack(outputs:size())

    -- outputs = outputs.permute(0, 2, 1, 3)
    outputs = outputs:permute(1, 3, 2, 4)
    -- outputs = outputs.contiguous().view(batch_size, subsampled_lengths,
    --     channels * sumsampled_dim)
    outputs = outputs:contiguous():view(batch_size, subsampled_lengths,
        channels * sumsampled_dim)

    -- output_lengths = input_lengths >> 2
    -- (the method: Lua 5.1 and LuaJIT have no >>)
    local output_lengths = input_lengths:bitwise_right_shift(2)
    -- output_lengths -= 1
    output_lengths:sub_(1)

    return outputs, output_lengths
end

---------------------------------------------------------------------------------------------
-- feed_forward.py
---------------------------------------------------------------------------------------------
-- class FeedForwardModule(nn.Module):
local FeedForwardModule = nn.Module:extend("FeedForwardModule")
nn.signature(FeedForwardModule, "self, encoder_dim: int = 512, expansion_factor: int = 4, "
    .. "dropout_p: float = 0.1")
function FeedForwardModule:init(encoder_dim, expansion_factor, dropout_p)
    self.sequential = nn.Sequential(
        nn.LayerNorm(encoder_dim),
        -- Linear(encoder_dim, encoder_dim * expansion_factor, bias=True),
        Linear(encoder_dim, encoder_dim * expansion_factor, { bias = true }),
        Swish(),
        -- nn.Dropout(p=dropout_p),
        nn.Dropout({ p = dropout_p }),
        -- Linear(encoder_dim * expansion_factor, encoder_dim, bias=True),
        Linear(encoder_dim * expansion_factor, encoder_dim, { bias = true }),
        -- nn.Dropout(p=dropout_p),
        nn.Dropout({ p = dropout_p })
    )
end
function FeedForwardModule:forward(inputs)
    return self.sequential(inputs)
end

---------------------------------------------------------------------------------------------
-- encoder.py
---------------------------------------------------------------------------------------------
-- class ConformerBlock(nn.Module):
local ConformerBlock = nn.Module:extend("ConformerBlock")
nn.signature(ConformerBlock, [[self, encoder_dim: int = 512, num_attention_heads: int = 8,
    feed_forward_expansion_factor: int = 4, conv_expansion_factor: int = 2,
    feed_forward_dropout_p: float = 0.1, attention_dropout_p: float = 0.1,
    conv_dropout_p: float = 0.1, conv_kernel_size: int = 31, half_step_residual: bool = True]])
function ConformerBlock:init(encoder_dim, num_attention_heads, feed_forward_expansion_factor,
                             conv_expansion_factor, feed_forward_dropout_p, attention_dropout_p,
                             conv_dropout_p, conv_kernel_size, half_step_residual)
    if half_step_residual then
        self.feed_forward_residual_factor = 0.5
    else
        self.feed_forward_residual_factor = 1
    end

    self.sequential = nn.Sequential(
        ResidualConnectionModule({
            module = FeedForwardModule({
                encoder_dim = encoder_dim,
                expansion_factor = feed_forward_expansion_factor,
                dropout_p = feed_forward_dropout_p,
            }),
            module_factor = self.feed_forward_residual_factor,
        }),
        ResidualConnectionModule({
            module = MultiHeadedSelfAttentionModule({
                d_model = encoder_dim,
                num_heads = num_attention_heads,
                dropout_p = attention_dropout_p,
            }),
        }),
        ResidualConnectionModule({
            module = ConformerConvModule({
                in_channels = encoder_dim,
                kernel_size = conv_kernel_size,
                expansion_factor = conv_expansion_factor,
                dropout_p = conv_dropout_p,
            }),
        }),
        ResidualConnectionModule({
            module = FeedForwardModule({
                encoder_dim = encoder_dim,
                expansion_factor = feed_forward_expansion_factor,
                dropout_p = feed_forward_dropout_p,
            }),
            module_factor = self.feed_forward_residual_factor,
        }),
        nn.LayerNorm(encoder_dim)
    )
end
function ConformerBlock:forward(inputs)
    return self.sequential(inputs)
end

-- class ConformerEncoder(nn.Module):
local ConformerEncoder = nn.Module:extend("ConformerEncoder")
nn.signature(ConformerEncoder, [[self, input_dim: int = 80, encoder_dim: int = 512,
    num_layers: int = 17, num_attention_heads: int = 8, feed_forward_expansion_factor: int = 4,
    conv_expansion_factor: int = 2, input_dropout_p: float = 0.1,
    feed_forward_dropout_p: float = 0.1, attention_dropout_p: float = 0.1,
    conv_dropout_p: float = 0.1, conv_kernel_size: int = 31, half_step_residual: bool = True]])
function ConformerEncoder:init(input_dim, encoder_dim, num_layers, num_attention_heads,
                               feed_forward_expansion_factor, conv_expansion_factor,
                               input_dropout_p, feed_forward_dropout_p, attention_dropout_p,
                               conv_dropout_p, conv_kernel_size, half_step_residual)
    -- self.conv_subsample = Conv2dSubampling(in_channels=1, out_channels=encoder_dim)
    self.conv_subsample = Conv2dSubampling({ in_channels = 1, out_channels = encoder_dim })
    self.input_projection = nn.Sequential(
        -- Linear(encoder_dim * (((input_dim - 1) // 2 - 1) // 2), encoder_dim),
        Linear(encoder_dim * math.floor((math.floor((input_dim - 1) / 2) - 1) / 2), encoder_dim),
        -- nn.Dropout(p=input_dropout_p),
        nn.Dropout({ p = input_dropout_p })
    )
    -- self.layers = nn.ModuleList([ConformerBlock(...) for _ in range(num_layers)])
    local layers = {}
    for _ = 1, num_layers do
        layers[#layers + 1] = ConformerBlock({
            encoder_dim = encoder_dim,
            num_attention_heads = num_attention_heads,
            feed_forward_expansion_factor = feed_forward_expansion_factor,
            conv_expansion_factor = conv_expansion_factor,
            feed_forward_dropout_p = feed_forward_dropout_p,
            attention_dropout_p = attention_dropout_p,
            conv_dropout_p = conv_dropout_p,
            conv_kernel_size = conv_kernel_size,
            half_step_residual = half_step_residual,
        })
    end
    self.layers = nn.ModuleList(layers)
end

-- def count_parameters(self) -> int:
function ConformerEncoder:count_parameters()
    -- return sum([p.numel() for p in self.parameters()])
    local n = 0
    for _, p in ipairs(self:parameters()) do n = n + p:numel() end
    return n
end

-- def update_dropout(self, dropout_p: float) -> None:
function ConformerEncoder:update_dropout(dropout_p)
    -- for name, child in self.named_children():
    for _, nc in ipairs(self:named_children()) do
        local child = nc[2]
        -- if isinstance(child, nn.Dropout):
        if tide.isinstance(child, nn.Dropout) then
            child.p = dropout_p
        end
    end
end

-- def forward(self, inputs: Tensor, input_lengths: Tensor) -> Tuple[Tensor, Tensor]:
function ConformerEncoder:forward(inputs, input_lengths)
    local outputs, output_lengths = self.conv_subsample(inputs, input_lengths)
    outputs = self.input_projection(outputs)

    -- for layer in self.layers:
    for _, layer in ipairs(self.layers) do
        outputs = layer(outputs)
    end

    return outputs, output_lengths
end

---------------------------------------------------------------------------------------------
-- model.py
---------------------------------------------------------------------------------------------
-- class Conformer(nn.Module):
local Conformer = nn.Module:extend("Conformer")
nn.signature(Conformer, [[self, num_classes: int, input_dim: int = 80, encoder_dim: int = 512,
    num_encoder_layers: int = 17, num_attention_heads: int = 8,
    feed_forward_expansion_factor: int = 4, conv_expansion_factor: int = 2,
    input_dropout_p: float = 0.1, feed_forward_dropout_p: float = 0.1,
    attention_dropout_p: float = 0.1, conv_dropout_p: float = 0.1, conv_kernel_size: int = 31,
    half_step_residual: bool = True]])
function Conformer:init(num_classes, input_dim, encoder_dim, num_encoder_layers,
                        num_attention_heads, feed_forward_expansion_factor,
                        conv_expansion_factor, input_dropout_p, feed_forward_dropout_p,
                        attention_dropout_p, conv_dropout_p, conv_kernel_size,
                        half_step_residual)
    self.encoder = ConformerEncoder({
        input_dim = input_dim,
        encoder_dim = encoder_dim,
        num_layers = num_encoder_layers,
        num_attention_heads = num_attention_heads,
        feed_forward_expansion_factor = feed_forward_expansion_factor,
        conv_expansion_factor = conv_expansion_factor,
        input_dropout_p = input_dropout_p,
        feed_forward_dropout_p = feed_forward_dropout_p,
        attention_dropout_p = attention_dropout_p,
        conv_dropout_p = conv_dropout_p,
        conv_kernel_size = conv_kernel_size,
        half_step_residual = half_step_residual,
    })
    -- self.fc = Linear(encoder_dim, num_classes, bias=False)
    self.fc = Linear(encoder_dim, num_classes, { bias = false })
end

function Conformer:count_parameters()
    return self.encoder:count_parameters()
end

function Conformer:update_dropout(dropout_p)
    self.encoder:update_dropout(dropout_p)
end

function Conformer:forward(inputs, input_lengths)
    local encoder_outputs, encoder_output_lengths = self.encoder(inputs, input_lengths)
    local outputs = self.fc(encoder_outputs)
    -- outputs = nn.functional.log_softmax(outputs, dim=-1)
    outputs = nn.functional.log_softmax(outputs, { dim = -1 })
    return outputs, encoder_output_lengths
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()).float() + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- PyTorch's Sequential / ModuleList names its entries "0", "1", ...; tide's "1", "2", ...
local function tide_name(name)
    return (name:gsub("%.(%d+)", function(d) return "." .. (tonumber(d) + 1) end))
end

-- Conformer(num_classes=5, input_dim=8, encoder_dim=8, num_encoder_layers=1,
--     num_attention_heads=2, feed_forward_expansion_factor=2, conv_expansion_factor=2,
--     input_dropout_p=0.0, feed_forward_dropout_p=0.0, attention_dropout_p=0.0,
--     conv_dropout_p=0.0, conv_kernel_size=3)
local function tiny_conformer()
    return Conformer(5, { input_dim = 8, encoder_dim = 8, num_encoder_layers = 1,
        num_attention_heads = 2, feed_forward_expansion_factor = 2, conv_expansion_factor = 2,
        input_dropout_p = 0.0, feed_forward_dropout_p = 0.0, attention_dropout_p = 0.0,
        conv_dropout_p = 0.0, conv_kernel_size = 3 })
end

-- x = torch.sin(0.37 * torch.arange(2 * 12 * 8).float() + 0.5).view(2, 12, 8)
local function inputs()
    return (tide.arange(2 * 12 * 8):float() * 0.37 + 0.5):sin():view(2, 12, 8)
end

describe("sooftware/conformer", function()
    it("Swish, GLU, View and Transpose as the Python modules", function()
        local x = tide.tensor({ { -1.0, 0.0, 2.0, 3.0 } })
        -- x * sigmoid(x) at -1, 0, 2, 3
        assert_close_list({ -0.26894142, 0.0, 1.7615942, 2.8577223 },
            Swish()(x):flatten():tolist(), 1e-6, "swish")
        -- (-1, 0) * sigmoid((2, 3))
        assert_close_list({ -0.8807971, 0.0 }, GLU(2)(x):flatten():tolist(), 1e-6, "glu")
        assert.same({ 2, 2 }, View({ shape = { 2, 2 }, contiguous = true })(x).shape)
        assert.same({ 4, 1 }, Transpose({ 1, 2 })(x).shape)
    end)

    it("RelPositionalEncoding: 2 * max_len - 1 positions, the window about the middle", function()
        local pe = RelPositionalEncoding(8, { max_len = 6 })
        assert.same({ 1, 11, 8 }, pe.pe.shape)
        -- the middle row is position 0: sin 0 = 0 and cos 0 = 1 alternating
        assert.same({ 0, 1, 0, 1, 0, 1, 0, 1 }, pe.pe[{ 1, 6 }]:tolist())
        -- row 5 is position +1, row 7 position -1: sin flips its sign, cos stays
        local p1, m1 = pe.pe[{ 1, 5 }]:tolist(), pe.pe[{ 1, 7 }]:tolist()
        assert_close_list({ math.sin(1), math.cos(1) }, { p1[1], p1[2] }, 1e-6, "pe +1")
        assert_close_list({ -math.sin(1), math.cos(1) }, { m1[1], m1[2] }, 1e-6, "pe -1")
        local e = pe(tide.zeros(2, 4, 8))
        assert.same({ 1, 7, 8 }, e.shape)
        assert.same(pe.pe[{ {}, { 3, 9 } }]:tolist(), e:tolist())
        -- a longer input extends the table
        assert.same({ 1, 13, 8 }, pe(tide.zeros(1, 7, 8)).shape)
        assert.same({ 1, 13, 8 }, pe.pe.shape)
    end)

    it("_relative_shift on a fixed tensor as PyTorch's", function()
        local att = RelativeMultiHeadAttention(8, 2, 0.0)
        -- torch.arange(2 * 2 * 3 * 5).float().view(2, 2, 3, 5)
        local ps = tide.arange(2 * 2 * 3 * 5):float():view(2, 2, 3, 5)
        local r = att:_relative_shift(ps)
        assert.same({ 2, 2, 3, 3 }, r.shape)
        assert.same(REF.shift, r:flatten():tolist())
    end)

    it("MultiHeadedSelfAttentionModule as PyTorch's (u_bias / v_bias parameters)", function()
        local a = MultiHeadedSelfAttentionModule(8, 2, 0.0)
        local names = {}
        for _, np in ipairs(a:named_parameters()) do names[#names + 1] = np[1] end
        assert.same(REF.attn_names, names)
        -- the positional table is a plain attribute, no buffer
        assert.is_nil(a:state_dict()["positional_encoding.pe"])
        fill_from_formula(a)
        -- xa = torch.sin(0.29 * torch.arange(2 * 5 * 8).float() + 0.1).view(2, 5, 8)
        local xa = (tide.arange(2 * 5 * 8):float() * 0.29 + 0.1):sin():view(2, 5, 8)
        local oa = a(xa)
        assert.same({ 2, 5, 8 }, oa.shape)
        assert_close_list({ REF.attn[1], REF.attn[2] },
            { oa:sum():item(), oa:abs():sum():item() }, 1e-4, "attn sums")
        local f = oa:flatten():tolist()
        assert_close_list(REF.attn[3], { unpack(f, 1, 6) }, 1e-4, "attn")
        -- mask = torch.zeros(2, 1, 5, dtype=torch.bool); mask[1, :, 3:] = True
        local mask = tide.zeros(2, 1, 5, { dtype = "bool" })
        mask[{ 2, {}, { 4, -1 } }] = true
        local om = a(xa, mask)
        assert_close_list({ REF.masked[1], REF.masked[2] },
            { om:sum():item(), om:abs():sum():item() }, 1e-4, "masked sums")
        assert_close_list(REF.masked[3], { unpack(om[2]:flatten():tolist(), 1, 4) }, 1e-4,
            "masked")
        -- batch 1 has no mask: as before
        assert_close_list(REF.attn[3], { unpack(om[1]:flatten():tolist(), 1, 6) }, 1e-4, "attn")
    end)

    it("Conformer: parameters, encoder outputs and lengths, log-probs, 2 Adam CTC steps",
        function()
            local model = tiny_conformer()
            local nps = model:named_parameters()
            assert.equal(REF.n_params, #nps)
            for i, name in ipairs(REF.first_names) do
                assert.equal(tide_name(name), nps[i][1])
            end
            assert.equal(tide_name(REF.last_names[1]), nps[30][1])
            assert.equal(tide_name(REF.last_names[2]), nps[31][1])
            assert.equal("fc.linear.weight", nps[43][1])
            -- count_parameters counts the encoder only (fc's 40 left out)
            assert.equal(REF.count, model:count_parameters() + 40)

            fill_from_formula(model)
            model:eval()
            local x = inputs()
            -- lens = torch.tensor([12, 9])
            local lens = tide.tensor({ 12, 9 }, { dtype = "int64" })
            local eo, el = model.encoder(x, lens)
            assert.same({ 2, 2, 8 }, eo.shape)
            assert.equal("int64", el.dtype)
            assert.same(REF.out_lengths, el:tolist())
            -- input_lengths is left as it was
            assert.same({ 12, 9 }, lens:tolist())
            assert_close_list(REF.enc, eo:flatten():tolist(), 1e-4, "encoder outputs")
            local lp, ol = model(x, lens)
            assert.same({ 2, 2, 5 }, lp.shape)
            assert.same(REF.out_lengths, ol:tolist())
            assert_close_list(REF.logp, lp:flatten():tolist(), 1e-4, "log-probs")

            -- update_dropout walks the encoder's children: none is a Dropout itself
            model:update_dropout(0.5)
            assert.equal(0.0, model.encoder.input_projection[2].p)

            model:train()
            -- torch.manual_seed(0); targets = torch.randint(1, 5, (2, 2)): [[1, 4], [2, 1]]
            -- (1-based here, blank 1: each class plus one)
            local targets = tide.tensor({ { 2, 5 }, { 3, 2 } }, { dtype = "int64" })
            local tl = tide.tensor({ 2, 1 }, { dtype = "int64" })
            -- opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            local opt = tide.optim.Adam(model:parameters(), { lr = 1e-2 })
            local ctc = nn.CTCLoss()
            local losses = {}
            for s = 1, 3 do
                -- lp, ol = model(x, lens)
                lp, ol = model(x, lens)
                -- loss = ctc(lp.transpose(0, 1), targets, ol, tl)
                local loss = ctc(lp:transpose(1, 2), targets, ol, tl)
                losses[s] = loss:item()
                assert_finite(losses[s], "ctc loss")
                if s < 3 then
                    opt:zero_grad()
                    loss:backward()
                    opt:step()
                end
            end
            assert_close_list(REF.loss, losses, 1e-4, "ctc losses")
            assert.is_true(losses[3] < losses[1])
        end)
end)
