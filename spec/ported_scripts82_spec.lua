-- ported_scripts82_spec.lua — tkipf/pygcn (pygcn/layers.py GraphConvolution, pygcn/models.py
-- GCN, pygcn/utils.py encode_onehot / load_data's pipeline / normalize /
-- sparse_mx_to_torch_sparse_tensor / accuracy, pygcn/train.py's train and test) and
-- Diego999/pyGAT's sparse GAT (layers.py SpecialSpmmFunction, SpecialSpmm,
-- SpGraphAttentionLayer; models.py SpGAT; utils.py normalize_adj), ported line for line on a
-- tiny synthetic graph (6 nodes, 5 features, 3 classes) in place of the Cora files. The Python
-- line stands above each Lua line that differs from it. Node and class indices are 1-based.
-- scipy.sparse's steps run on dense tide tensors (tide has no sparse-sparse arithmetic); the
-- adjacency the model multiplies is a tide sparse COO tensor, as pygcn's.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. tkipf/pygcn pygcn/utils.py
---------------------------------------------------------------------------------------------
-- def encode_onehot(labels):
local function encode_onehot(labels)
    -- classes = set(labels): a set's order is Python's hash order; sorted as pyGAT's utils.py
    local seen, classes = {}, {}
    for _, c in ipairs(labels) do
        if not seen[c] then
            seen[c] = true
            classes[#classes + 1] = c
        end
    end
    table.sort(classes)
    -- classes_dict = {c: np.identity(len(classes))[i, :] for i, c in enumerate(classes)}
    local classes_dict = {}
    for i, c in ipairs(classes) do
        classes_dict[c] = tide.eye(#classes)[i]
    end
    -- labels_onehot = np.array(list(map(classes_dict.get, labels)), dtype=np.int32)
    local rows = {}
    for i, c in ipairs(labels) do
        rows[i] = classes_dict[c]
    end
    return tide.stack(rows):to(tide.int32)
end

-- def normalize(mx):  """Row-normalize sparse matrix""" (a dense one here)
local function normalize(mx)
    -- rowsum = np.array(mx.sum(1))
    local rowsum = mx:sum(2)
    -- r_inv = np.power(rowsum, -1).flatten()
    local r_inv = rowsum:pow(-1):flatten()
    -- r_inv[np.isinf(r_inv)] = 0.
    r_inv[r_inv:isinf()] = 0
    -- r_mat_inv = sp.diags(r_inv)
    local r_mat_inv = tide.diag(r_inv)
    -- mx = r_mat_inv.dot(mx)
    return r_mat_inv:mm(mx)
end

-- pyGAT utils.py: def normalize_adj(mx): the symmetric D^-1/2 (A + I) D^-1/2
local function normalize_adj(mx)
    local rowsum = mx:sum(2)
    local r_inv_sqrt = rowsum:pow(-0.5):flatten()
    r_inv_sqrt[r_inv_sqrt:isinf()] = 0
    local r_mat_inv_sqrt = tide.diag(r_inv_sqrt)
    -- return mx.dot(r_mat_inv_sqrt).transpose().dot(r_mat_inv_sqrt)
    return mx:mm(r_mat_inv_sqrt):t():mm(r_mat_inv_sqrt)
end

-- def sparse_mx_to_torch_sparse_tensor(sparse_mx):
local function sparse_mx_to_torch_sparse_tensor(sparse_mx)
    -- sparse_mx = sparse_mx.tocoo().astype(np.float32)
    sparse_mx = sparse_mx:float():to_sparse()
    -- indices = torch.from_numpy(np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    local row, col = sparse_mx:indices()[1], sparse_mx:indices()[2]
    local indices = tide.stack({ row, col }):long()
    -- values = torch.from_numpy(sparse_mx.data)
    local values = sparse_mx:values()
    -- shape = torch.Size(sparse_mx.shape)
    local shape = sparse_mx.shape
    -- return torch.sparse.FloatTensor(indices, values, shape)
    return tide.sparse.FloatTensor(indices, values, shape)
end

-- def accuracy(output, labels):
local function accuracy(output, labels)
    -- preds = output.max(1)[1].type_as(labels)
    local _, preds = output:max(2)
    preds = preds:type_as(labels)
    local correct = preds:eq(labels):double()
    correct = correct:sum()
    -- return correct / len(labels)
    return correct / #labels
end

-- the synthetic graph in place of cora.content / cora.cites: node i's features, its label, and
-- the directed citations (1-based ids; (1, 2) twice, (2, 1) its reverse, (1, 3) one way only)
local N = 6
local CONTENT = {
    { 1, 0, 1, 0, 0 }, { 0, 1, 0, 0, 1 }, { 1, 1, 0, 1, 0 },
    { 0, 0, 0, 0, 0 }, -- no features: normalize's r_inv is inf there, set to 0
    { 0, 0, 1, 1, 1 }, { 1, 0, 0, 0, 1 },
}
local LABELS = { "b", "a", "c", "a", "b", "c" }
local CITES = { { 1, 2 }, { 2, 1 }, { 2, 3 }, { 3, 4 }, { 4, 5 }, { 5, 6 }, { 6, 1 }, { 1, 3 },
    { 1, 2 } }

-- def load_data(path="../data/cora/", dataset="cora"): pygcn's; gat = true gives pyGAT's dense
-- normalize_adj(adj + I) in place of pygcn's sparse normalize(adj + I)
local function load_data(gat)
    -- features = sp.csr_matrix(idx_features_labels[:, 1:-1], dtype=np.float32)
    local features = tide.tensor(CONTENT, { dtype = tide.float32 })
    -- labels = encode_onehot(idx_features_labels[:, -1])
    local labels = encode_onehot(LABELS)
    -- edges = np.array(list(map(idx_map.get, edges_unordered.flatten())), ...)
    local edges = tide.tensor(CITES, { dtype = tide.int64 })
    -- adj = sp.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])),
    --                     shape=(labels.shape[0], labels.shape[0]), dtype=np.float32)
    local adj = tide.sparse_coo_tensor(edges:t(), tide.ones(edges:size(1)), { N, N })
    -- build symmetric adjacency matrix
    -- adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)
    -- GAP: a sparse tensor has no comparison or elementwise multiply (s:t():gt(s) raises
    -- `tide: gt: a sparse tensor has no gt; convert it with t:to_dense() ...`): dense, as
    -- scipy's result (coo duplicates summed)
    adj = adj:to_dense()
    adj = adj + adj:t():mul(adj:t():gt(adj)) - adj:mul(adj:t():gt(adj))

    -- features = normalize(features)
    features = normalize(features)
    -- adj = normalize(adj + sp.eye(adj.shape[0]))
    if gat then
        adj = normalize_adj(adj + tide.eye(adj:size(1)))
    else
        adj = normalize(adj + tide.eye(adj:size(1)))
    end

    -- idx_train = range(140); idx_val = range(200, 500); idx_test = range(500, 1500)
    local idx_train = tide.tensor({ 1, 2, 3 }, { dtype = tide.int64 })
    local idx_val = tide.tensor({ 4, 5 }, { dtype = tide.int64 })
    local idx_test = tide.tensor({ 6 }, { dtype = tide.int64 })

    -- labels = torch.LongTensor(np.where(labels)[1])
    labels = labels:nonzero():select(2, 2):long()
    -- adj = sparse_mx_to_torch_sparse_tensor(adj)  (pyGAT: adj = torch.FloatTensor(adj))
    if not gat then
        adj = sparse_mx_to_torch_sparse_tensor(adj)
    end
    return adj, features, labels, idx_train, idx_val, idx_test
end

---------------------------------------------------------------------------------------------
-- pygcn/layers.py, pygcn/models.py
---------------------------------------------------------------------------------------------
-- class GraphConvolution(Module):
local GraphConvolution = nn.Module:extend("GraphConvolution")
-- def __init__(self, in_features, out_features, bias=True):
function GraphConvolution:init(in_features, out_features, bias)
    self.in_features = in_features
    self.out_features = out_features
    -- self.weight = Parameter(torch.FloatTensor(in_features, out_features))
    self.weight = nn.Parameter(tide.empty(in_features, out_features))
    if bias ~= false then
        self.bias = nn.Parameter(tide.empty(out_features))
    else
        -- self.register_parameter('bias', None)
        self:register_parameter("bias", nil)
    end
    self:reset_parameters()
end

function GraphConvolution:reset_parameters()
    -- stdv = 1. / math.sqrt(self.weight.size(1))
    local stdv = 1 / math.sqrt(self.weight:size(2))
    -- self.weight.data.uniform_(-stdv, stdv)
    self.weight.data:uniform_(-stdv, stdv)
    if self.bias ~= nil then
        self.bias.data:uniform_(-stdv, stdv)
    end
end

function GraphConvolution:forward(input, adj)
    -- support = torch.mm(input, self.weight)
    local support = tide.mm(input, self.weight)
    -- output = torch.spmm(adj, support)
    local output = tide.spmm(adj, support)
    if self.bias ~= nil then
        return output + self.bias
    else
        return output
    end
end

-- def __repr__(self):
function GraphConvolution:__tostring()
    return self.__name .. " (" .. self.in_features .. " -> " .. self.out_features .. ")"
end

-- class GCN(nn.Module):
local GCN = nn.Module:extend("GCN")
-- def __init__(self, nfeat, nhid, nclass, dropout):
function GCN:init(nfeat, nhid, nclass, dropout)
    self.gc1 = GraphConvolution(nfeat, nhid)
    self.gc2 = GraphConvolution(nhid, nclass)
    self.dropout = dropout
end

function GCN:forward(x, adj)
    x = F.relu(self.gc1(x, adj))
    -- x = F.dropout(x, self.dropout, training=self.training)
    x = F.dropout(x, self.dropout, { training = self.training })
    x = self.gc2(x, adj)
    -- return F.log_softmax(x, dim=1)
    return F.log_softmax(x, { dim = 2 })
end

---------------------------------------------------------------------------------------------
-- 2. Diego999/pyGAT layers.py, models.py
---------------------------------------------------------------------------------------------
-- class SpecialSpmmFunction(torch.autograd.Function):
local SpecialSpmmFunction = tide.autograd.Function:extend("SpecialSpmmFunction")
-- def forward(ctx, indices, values, shape, b):
function SpecialSpmmFunction.forward(ctx, indices, values, shape, b)
    assert(indices.requires_grad == false)
    -- a = torch.sparse_coo_tensor(indices, values, shape)
    local a = tide.sparse_coo_tensor(indices, values, shape)
    -- ctx.save_for_backward(a, b)
    -- GAP: save_for_backward takes dense tensors only (a sparse one raises `tide:
    -- SpecialSpmmFunction.forward: save_for_backward takes tensors (or nil), argument 1 is a
    -- table; keep other values as fields of ctx`): a is kept as a field of ctx
    ctx.a = a
    ctx:save_for_backward(b)
    -- ctx.N = shape[0]
    ctx.N = shape[1]
    -- return torch.matmul(a, b)
    -- GAP: tide.matmul takes no sparse operand (`tide: matmul: argument #1 must be a tensor,
    -- got a sparse tensor (t:to_dense() makes it dense)`); the method a:matmul(b) does
    return a:matmul(b)
end

-- def backward(ctx, grad_output):
function SpecialSpmmFunction.backward(ctx, grad_output)
    -- a, b = ctx.saved_tensors
    local a, b = ctx.a, ctx.saved_tensors[1]
    local grad_values, grad_b
    -- if ctx.needs_input_grad[1]:
    if ctx.needs_input_grad[2] then
        local grad_a_dense = grad_output:matmul(b:t())
        -- edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]  (0-based, flat)
        local edge_idx = (a:_indices()[1] - 1) * ctx.N + a:_indices()[2]
        -- grad_values = grad_a_dense.view(-1)[edge_idx]
        grad_values = grad_a_dense:view(-1)[edge_idx]
    end
    -- if ctx.needs_input_grad[3]:
    if ctx.needs_input_grad[4] then
        -- grad_b = a.t().matmul(grad_output)
        grad_b = a:t():matmul(grad_output)
    end
    -- return None, grad_values, None, grad_b
    return nil, grad_values, nil, grad_b
end

-- class SpecialSpmm(nn.Module):
local SpecialSpmm = nn.Module:extend("SpecialSpmm")
function SpecialSpmm:forward(indices, values, shape, b)
    return SpecialSpmmFunction.apply(indices, values, shape, b)
end

-- class SpGraphAttentionLayer(nn.Module):
local SpGraphAttentionLayer = nn.Module:extend("SpGraphAttentionLayer")
-- def __init__(self, in_features, out_features, dropout, alpha, concat=True):
function SpGraphAttentionLayer:init(in_features, out_features, dropout, alpha, concat)
    self.in_features = in_features
    self.out_features = out_features
    self.alpha = alpha
    -- self.concat = concat
    self.concat = concat ~= false

    -- self.W = nn.Parameter(torch.zeros(size=(in_features, out_features)))
    self.W = nn.Parameter(tide.zeros(in_features, out_features))
    -- nn.init.xavier_normal_(self.W.data, gain=1.414)
    nn.init.xavier_normal_(self.W.data, { gain = 1.414 })

    -- self.a = nn.Parameter(torch.zeros(size=(1, 2*out_features)))
    self.a = nn.Parameter(tide.zeros(1, 2 * out_features))
    nn.init.xavier_normal_(self.a.data, { gain = 1.414 })

    self.dropout = nn.Dropout(dropout)
    self.leakyrelu = nn.LeakyReLU(self.alpha)
    self.special_spmm = SpecialSpmm()
end

function SpGraphAttentionLayer:forward(input, adj)
    -- dv = 'cuda' if input.is_cuda else 'cpu'
    local dv = input.device

    -- N = input.size()[0]
    local N = input:size(1)
    -- edge = adj.nonzero().t()
    local edge = adj:nonzero():t()

    -- h = torch.mm(input, self.W)
    local h = tide.mm(input, self.W)
    -- h: N x out
    -- assert not torch.isnan(h).any()
    assert(not tide.isnan(h):any():item())

    -- Self-attention on the nodes - Shared attention mechanism
    -- edge_h = torch.cat((h[edge[0, :], :], h[edge[1, :], :]), dim=1).t()
    local edge_h = tide.cat({ h[edge[1]], h[edge[2]] }, { dim = 2 }):t()
    -- edge: 2*D x E

    -- edge_e = torch.exp(-self.leakyrelu(self.a.mm(edge_h).squeeze()))
    local edge_e = tide.exp(-self.leakyrelu(self.a:mm(edge_h):squeeze()))
    assert(not tide.isnan(edge_e):any():item())
    -- edge_e: E

    -- e_rowsum = self.special_spmm(edge, edge_e, torch.Size([N, N]),
    --                              torch.ones(size=(N,1), device=dv))
    local e_rowsum = self.special_spmm(edge, edge_e, { N, N }, tide.ones({ N, 1 }, { device = dv }))
    -- e_rowsum: N x 1

    edge_e = self.dropout(edge_e)
    -- edge_e: E

    -- h_prime = self.special_spmm(edge, edge_e, torch.Size([N, N]), h)
    local h_prime = self.special_spmm(edge, edge_e, { N, N }, h)
    assert(not tide.isnan(h_prime):any():item())
    -- h_prime: N x out

    h_prime = h_prime:div(e_rowsum)
    -- h_prime: N x out
    assert(not tide.isnan(h_prime):any():item())

    if self.concat then
        -- if this layer is not last layer,
        return F.elu(h_prime)
    else
        -- if this layer is last layer,
        return h_prime
    end
end

-- class SpGAT(nn.Module):
local SpGAT = nn.Module:extend("SpGAT")
-- def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
function SpGAT:init(nfeat, nhid, nclass, dropout, alpha, nheads)
    self.dropout = dropout

    -- self.attentions = [SpGraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha,
    --                                          concat=True) for _ in range(nheads)]
    -- (a plain list, registered by add_module only, as PyTorch's)
    local attentions = {}
    for _ = 1, nheads do
        attentions[#attentions + 1] = SpGraphAttentionLayer(nfeat, nhid, dropout, alpha, true)
    end
    -- for i, attention in enumerate(self.attentions):
    --     self.add_module('attention_{}'.format(i), attention)
    for i, attention in ipairs(attentions) do
        self:add_module(("attention_%d"):format(i - 1), attention)
    end
    self.attentions = attentions

    self.out_att = SpGraphAttentionLayer(nhid * nheads, nclass, dropout, alpha, false)
end

function SpGAT:forward(x, adj)
    x = F.dropout(x, self.dropout, { training = self.training })
    -- x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
    local heads = {}
    for i, att in ipairs(self.attentions) do
        heads[i] = att(x, adj)
    end
    x = tide.cat(heads, { dim = 2 })
    x = F.dropout(x, self.dropout, { training = self.training })
    x = F.elu(self.out_att(x, adj))
    -- return F.log_softmax(x, dim=1)
    return F.log_softmax(x, { dim = 2 })
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- the fixed weights the PyTorch check sets in both: parameter k (named_parameters' order, 0-based
-- in Python), element j (0-based): 0.8 sin(1.3 j + 0.7 k + 0.1)
local function fill(model)
    tide.no_grad(function()
        for k, p in ipairs(model:parameters()) do
            local j = tide.arange(p:numel()):double()
            p:copy_((0.8 * tide.sin(1.3 * j + 0.7 * (k - 1) + 0.1)):view(p.shape))
        end
    end)
end

local function flat(t)
    return t:detach():flatten():double():totable()
end

-- PyTorch 1.13 running pygcn's and pyGAT's files (scipy.sparse for utils.py) on the graph above
local PT = {
    -- normalize(adj + I), dense, row-major
    adj = { 0.2, 0.4, 0.2, 0, 0, 0.2, 0.5, 0.25, 0.25, 0, 0, 0, 0.25, 0.25, 0.25, 0.25, 0, 0,
        0, 0, 1 / 3, 1 / 3, 1 / 3, 0, 0, 0, 0, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 0, 0, 0, 1 / 3, 1 / 3 },
    -- pyGAT's normalize_adj(adj + I)
    adj_gat = { 0.2, 0.44721359, 0.2236068, 0, 0, 0.25819889, 0.44721359, 0.25, 0.25, 0, 0, 0,
        0.2236068, 0.25, 0.25, 0.28867513, 0, 0, 0, 0, 0.28867513, 1 / 3, 1 / 3, 0, 0, 0, 0,
        1 / 3, 1 / 3, 1 / 3, 0.25819889, 0, 0, 0, 1 / 3, 1 / 3 },
    features = { 0.5, 0, 0.5, 0, 0, 0, 0.5, 0, 0, 0.5, 1 / 3, 1 / 3, 0, 1 / 3, 0, 0, 0, 0, 0, 0,
        0, 0, 1 / 3, 1 / 3, 1 / 3, 0.5, 0, 0, 0, 0.5 },
    labels = { 2, 1, 3, 1, 2, 3 }, -- PyTorch's + 1
    -- GCN(5, 4, 3, dropout=0) in eval mode
    gcn_out = { -0.67424351, -1.1520486, -1.7460053, -0.6871568, -1.1386517, -1.7330457,
        -0.65769374, -1.162863, -1.7756969, -0.58887017, -1.2034465, -1.9317927, -0.55745417,
        -1.2251375, -2.012773, -0.59212238, -1.1882398, -1.9512889 },
    gcn_loss = 1.2049674,
    -- train.py's loop, Adam(lr=0.01, weight_decay=5e-4), 3 epochs: loss_train, loss_val
    gcn_train = { 1.2049674, 1.1884266, 1.173942 },
    gcn_val = { 0.90625399, 0.90766144, 0.9121213 },
    -- SpGAT(5, 3, 3, dropout=0, alpha=0.2, nheads=2) in eval mode; the nll on idx_train
    gat_out = { -1.0036129, -1.0731741, -1.2326268, -1.0600998, -1.0703543, -1.168954,
        -1.0893574, -1.0696021, -1.1381150, -1.0929315, -1.0882164, -1.1148911, -1.0286124,
        -1.0897665, -1.1835096, -0.93706381, -1.096642, -1.2937778 },
    gat_loss = 1.0904630,
    gat_grad = {
        ["attention_0.W"] = { 0.00022076373, -0.0063515608, 0.0071259374, -0.0048254365,
            0.0021204783, 0.00087091862, 0.0038951782, -0.0023637242, -0.00127689,
            0.0036629958, 0.0041923081, -0.010775931, 0.0054215752, -0.0017920115,
            -0.0030106383 },
        ["attention_0.a"] = { 0.00031045970, -0.00015214860, -0.00039185880, -0.00021364678,
            0.0019952885, 0.0012811213 },
        ["attention_1.W"] = { -0.0025529929, -0.00019217888, 0.0039275018, -0.00151563,
            0.0020410793, -0.0037726318, 0.0035475399, -0.0026841906, 0.0023541069,
            0.011761891, -0.0057548294, -0.0041348278, 0.0052875672, -0.005733517,
            0.0010247384 },
        ["attention_1.a"] = { -0.00022297127, -0.00045716899, -2.1613034e-05, 0.0025836106,
            -0.0014864154, -0.0033788392 },
        ["out_att.W"] = { 0.0029643481, -0.0097253015, 0.0064807441, 0.0026380022,
            -0.0055323192, 0.0022449717, -0.0013944628, 0.0065285298, -0.0052282824,
            0.0020750118, -0.0035112826, 0.0010524879, -0.0013508262, 0.0082368692,
            -0.0069469428, -0.0025183831, 0.0072765728, -0.0044583133 },
        ["out_att.a"] = { -0.0011160477, -0.00030585405, 0.00095241639, -0.00069483096,
            -0.00018740221, 0.00059457129 },
    },
    -- Adam(lr=0.05, weight_decay=5e-4), 3 steps, dropout 0
    gat_train = { 1.0904630, 1.0803069, 1.0702310 },
}

-- a gradient's entries agree with PyTorch's to tol relative to its largest entry
local function assert_grad(want, got, tol, what)
    local scale = 0
    for _, w in ipairs(want) do scale = math.max(scale, math.abs(w)) end
    assert(#want == #got, what .. ": length")
    for i = 1, #want do
        assert(math.abs(got[i] - want[i]) <= tol * scale,
            ("%s[%d]: %.8g, PyTorch %.8g"):format(what, i, got[i], want[i]))
    end
end

describe("ported scripts 82: pygcn and pyGAT's SpGAT on a sparse adjacency", function()
    it("load_data: symmetric adjacency, row-normalized, as a sparse COO tensor", function()
        local adj, features, labels, idx_train = load_data()
        assert.is_true(adj.is_sparse)
        assert.are.equal("float32", adj.dtype)
        assert.are.same({ N, N }, adj.shape)
        -- 7 undirected edges both ways and 6 self loops, each stored once
        assert.are.equal(20, adj:_nnz())
        assert_close_list(PT.adj, flat(adj:to_dense()), 1e-6, "adj")
        assert_close_list(PT.features, flat(features), 1e-6, "features")
        assert.are.same(PT.labels, labels:totable())
        assert.are.equal("int64", labels.dtype)
        assert.are.same({ 1, 2, 3 }, idx_train:totable())
        local adj_gat = load_data(true)
        assert_close_list(PT.adj_gat, flat(adj_gat), 1e-6, "normalize_adj")
        assert.are.equal("GraphConvolution (5 -> 4)", tostring(GraphConvolution(5, 4)))
    end)

    it("GCN's log-probabilities, loss and train.py's loop as PyTorch's", function()
        tide.manual_seed(42)
        local adj, features, labels, idx_train, idx_val, idx_test = load_data()
        -- reset_parameters draws uniform(-stdv, stdv), stdv = 1 / sqrt(out_features)
        local gc = GraphConvolution(5, 4)
        assert.is_true(gc.weight:abs():max():item() <= 0.5 and gc.bias:abs():max():item() <= 0.5)
        assert.is_true(gc.weight:std():item() > 0.05)
        assert.are.equal(1, #GraphConvolution(5, 4, false):parameters())

        -- model = GCN(nfeat=features.shape[1], nhid=args.hidden,
        --             nclass=labels.max().item() + 1, dropout=args.dropout)
        local model = GCN(features.shape[2], 4, labels:max():item(), 0)
        fill(model)
        model:eval()
        local output = model(features, adj)
        assert.are.same({ N, 3 }, output.shape)
        assert_close_list(PT.gcn_out, flat(output), 1e-5, "log_softmax")
        -- loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        local loss = F.nll_loss(output[idx_train], labels[idx_train])
        assert.is_true(ported.close(loss:item(), PT.gcn_loss, 1e-5))
        assert.is_true(ported.close(accuracy(output[idx_train], labels[idx_train]):item(),
            1 / 3, 1e-12))

        -- optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        local optimizer = optim.Adam(model:parameters(), { lr = 0.01, weight_decay = 5e-4 })
        local losses, val = {}, {}
        -- def train(epoch):
        local function train()
            model:train()
            optimizer:zero_grad()
            output = model(features, adj)
            local loss_train = F.nll_loss(output[idx_train], labels[idx_train])
            local acc_train = accuracy(output[idx_train], labels[idx_train])
            loss_train:backward()
            optimizer:step()
            -- model.eval(); output = model(features, adj)  (not args.fastmode)
            model:eval()
            output = model(features, adj)
            local loss_val = F.nll_loss(output[idx_val], labels[idx_val])
            local acc_val = accuracy(output[idx_val], labels[idx_val])
            assert_finite(acc_train:item() + acc_val:item(), "accuracy")
            losses[#losses + 1], val[#val + 1] = loss_train:item(), loss_val:item()
        end
        -- for epoch in range(args.epochs): train(epoch)
        for _ = 1, 3 do
            train()
        end
        assert_close_list(PT.gcn_train, losses, 1e-5, "loss_train")
        assert_close_list(PT.gcn_val, val, 1e-5, "loss_val")
        assert.is_true(losses[3] < losses[1])

        -- def test():  with dropout 0.5 in training, as train.py's default
        local m = GCN(5, 16, 3, 0.5)
        local opt = optim.Adam(m:parameters(), { lr = 0.01, weight_decay = 5e-4 })
        for _ = 1, 2 do
            m:train()
            opt:zero_grad()
            local l = F.nll_loss(m(features, adj)[idx_train], labels[idx_train])
            assert_finite(l:item(), "loss_train")
            l:backward()
            opt:step()
        end
        m:eval()
        output = m(features, adj)
        local loss_test = F.nll_loss(output[idx_test], labels[idx_test])
        local acc_test = accuracy(output[idx_test], labels[idx_test])
        assert_finite(loss_test:item(), "loss_test")
        assert.is_true(acc_test:item() == 0 or acc_test:item() == 1)
    end)

    it("SpGAT's output, gradients through SpecialSpmmFunction, and training as PyTorch's",
        function()
        tide.manual_seed(42)
        local adj, features, labels, idx_train = load_data(true)
        local model = SpGAT(5, 3, 3, 0, 0.2, 2)
        local names = {}
        for _, np in ipairs(model:named_parameters()) do names[#names + 1] = np[1] end
        assert.are.same({ "attention_0.W", "attention_0.a", "attention_1.W", "attention_1.a",
            "out_att.W", "out_att.a" }, names)
        fill(model)
        model:eval()
        local output = model(features, adj)
        assert_close_list(PT.gat_out, flat(output), 1e-5, "log_softmax")
        local loss = F.nll_loss(output[idx_train], labels[idx_train])
        assert.is_true(ported.close(loss:item(), PT.gat_loss, 1e-5))
        loss:backward()
        for _, np in ipairs(model:named_parameters()) do
            assert_grad(PT.gat_grad[np[1]], flat(np[2].grad), 1e-4, np[1] .. ".grad")
        end

        -- pyGAT's train.py: Adam(lr, weight_decay), nll on idx_train
        local optimizer = optim.Adam(model:parameters(), { lr = 0.05, weight_decay = 5e-4 })
        local losses = {}
        for _ = 1, 3 do
            model:train()
            optimizer:zero_grad()
            local loss_train = F.nll_loss(model(features, adj)[idx_train], labels[idx_train])
            loss_train:backward()
            optimizer:step()
            losses[#losses + 1] = loss_train:item()
        end
        assert_close_list(PT.gat_train, losses, 1e-5, "loss_train")
        assert.is_true(losses[3] < losses[1])

        -- with dropout (train.py's 0.6) and xavier_normal_'s weights: one step, finite
        local m = SpGAT(5, 3, 3, 0.6, 0.2, 2)
        m:train()
        local l = F.nll_loss(m(features, adj)[idx_train], labels[idx_train])
        l:backward()
        assert_finite(l:item(), "loss_train")
        assert_finite(m.out_att.a.grad:abs():sum():item(), "out_att.a.grad")
    end)
end)
