-- ported_scripts16_spec.lua — PyTorch scripts ported line for line: pytorch/examples' gat/main.py
-- (GraphAttentionLayer, masked softmax over an adjacency, multi-head concat/mean, GAT trained a
-- few epochs on a tiny random graph) and gcn/main.py (GraphConv, GCN, the renormalized
-- adjacency D^-1/2 A D^-1/2, dense where the script uses torch sparse tensors), the recipes
-- defining_a_neural_network.py and zeroing_out_gradients.py, and the 60-minute blitz's
-- neural_networks_tutorial.py (LeNet, net.zero_grad, out.backward(grad), autograd.next_functions,
-- the manual update f.data.sub_(f.grad.data * learning_rate)). The Python line stands above each
-- Lua line that differs from it; a line tide cannot write as Python does is marked `-- GAP:`.
-- Dims, indices and class targets are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function assert_close(expected, got, tol)
    local flat = got:flatten()
    assert.are.equal(#expected, flat:numel())
    for i = 1, #expected do
        local v = flat[i]:item()
        assert.is_true(math.abs(v - expected[i]) < (tol or 1e-5),
            ("element %d: expected %.7f, got %.7f"):format(i, expected[i], v))
    end
end

-- a tiny random graph: n nodes, a symmetric 0/1 adjacency with self-loops (Cora's
-- torch.eye(V) + adj_mat), features and labels
local function tiny_graph(n, n_features, n_classes)
    local features = tide.rand(n, n_features)
    -- scale_vector = torch.sum(features, dim=1); scale_vector = 1 / scale_vector
    local scale_vector = tide.sum(features, { dim = 2 })
    scale_vector = 1 / scale_vector
    -- scale_vector[scale_vector == float('inf')] = 0
    scale_vector[scale_vector:eq(tide.inf)] = 0
    -- scale_vector = torch.diag(scale_vector).to_sparse(); features = scale_vector @ features
    features = tide.diag(scale_vector):to_sparse():matmul(features)
    local edges = tide.rand(n, n):lt(0.3):to(tide.int64)
    local adj_mat = tide.eye(n) + ((edges + edges:t()):gt(0)):to(tide.int64)
    local labels = tide.randint(1, n_classes + 1, { n })
    return features, labels, adj_mat
end

local function train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val, test)
    model:train()
    optimizer:zero_grad()
    -- output = model(*input)
    local output = model(unpack(input))
    -- loss = criterion(output[mask_train], target[mask_train])
    local loss = criterion(output[mask_train], target[mask_train])
    loss:backward()
    optimizer:step()
    local loss_train, acc_train = test(model, criterion, input, target, mask_train)
    local loss_val, acc_val = test(model, criterion, input, target, mask_val)
    return loss_train, acc_train, loss_val, acc_val
end

local function test(model, criterion, input, target, mask)
    model:eval()
    local loss, acc
    tide.no_grad(function()
        local output = model(unpack(input))
        -- output, target = output[mask], target[mask]
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        -- acc = (output.argmax(dim=1) == target).float().sum() / len(target)
        acc = output:argmax({ dim = 2 }):eq(target):float():sum() / #target
    end)
    return loss:item(), acc:item()
end

---------------------------------------------------------------------------------------------
-- 1. gat/main.py
---------------------------------------------------------------------------------------------
describe("gat/main.py", function()
    -- class GraphAttentionLayer(nn.Module):
    local GraphAttentionLayer = nn.Module:extend("GraphAttentionLayer")
    -- def __init__(self, in_features, out_features, n_heads, concat=False, dropout=0.4,
    --              leaky_relu_slope=0.2):
    function GraphAttentionLayer:init(in_features, out_features, n_heads, opts)
        opts = opts or {}
        local concat = opts.concat or false
        local dropout = opts.dropout or 0.4
        local leaky_relu_slope = opts.leaky_relu_slope or 0.2
        self.n_heads = n_heads
        self.concat = concat
        self.dropout = dropout
        if concat then
            self.out_features = out_features
            assert(out_features % n_heads == 0)
            -- self.n_hidden = out_features // n_heads
            self.n_hidden = math.floor(out_features / n_heads)
        else
            self.n_hidden = out_features
        end
        -- self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.W = nn.Parameter(tide.empty({ size = { in_features, self.n_hidden * n_heads } }))
        -- self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.a = nn.Parameter(tide.empty({ size = { n_heads, 2 * self.n_hidden, 1 } }))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        -- self.softmax = nn.Softmax(dim=1)
        self.softmax = nn.Softmax({ dim = 2 })
        self:reset_parameters()
    end

    function GraphAttentionLayer:reset_parameters()
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)
    end

    function GraphAttentionLayer:_get_attention_scores(h_transformed)
        -- source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        local source_scores = tide.matmul(h_transformed, self.a[{ {}, { 1, self.n_hidden }, {} }])
        -- target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        local target_scores = tide.matmul(h_transformed, self.a[{ {}, { self.n_hidden + 1, -1 }, {} }])
        -- e = source_scores + target_scores.mT
        local e = source_scores + target_scores.mT
        return self.leakyrelu(e)
    end

    function GraphAttentionLayer:forward(h, adj_mat)
        -- n_nodes = h.shape[0]
        local n_nodes = h.shape[1]
        -- h_transformed = torch.mm(h, self.W)
        local h_transformed = tide.mm(h, self.W)
        -- h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = F.dropout(h_transformed, self.dropout, { training = self.training })
        -- h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        h_transformed = h_transformed:view(n_nodes, self.n_heads, self.n_hidden):permute(2, 1, 3)
        local e = self:_get_attention_scores(h_transformed)
        -- connectivity_mask = -9e16 * torch.ones_like(e)
        local connectivity_mask = -9e16 * tide.ones_like(e)
        -- e = torch.where(adj_mat > 0, e, connectivity_mask)
        -- (Lua's > on tensors must give one boolean: the elementwise form is :gt)
        e = tide.where(adj_mat:gt(0), e, connectivity_mask)
        -- attention = F.softmax(e, dim=-1)
        local attention = F.softmax(e, { dim = -1 })
        attention = F.dropout(attention, self.dropout, { training = self.training })
        local h_prime = tide.matmul(attention, h_transformed)
        if self.concat then
            -- h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
            h_prime = h_prime:permute(2, 1, 3):contiguous():view(n_nodes, self.out_features)
        else
            -- h_prime = h_prime.mean(dim=0)
            h_prime = h_prime:mean({ dim = 1 })
        end
        return h_prime
    end

    -- class GAT(nn.Module):
    local GAT = nn.Module:extend("GAT")
    -- def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4,
    --              leaky_relu_slope=0.2):
    -- (called by name as the script does: GAT({in_features = ..., n_hidden = ..., ...}))
    function GAT:init(o)
        local dropout = o.dropout or 0.4
        local leaky_relu_slope = o.leaky_relu_slope or 0.2
        -- self.gat1 = GraphAttentionLayer(in_features=in_features, out_features=n_hidden,
        --     n_heads=n_heads, concat=concat, dropout=dropout, leaky_relu_slope=leaky_relu_slope)
        self.gat1 = GraphAttentionLayer(o.in_features, o.n_hidden, o.n_heads,
            { concat = o.concat or false, dropout = dropout, leaky_relu_slope = leaky_relu_slope })
        self.gat2 = GraphAttentionLayer(o.n_hidden, o.num_classes, 1,
            { concat = false, dropout = dropout, leaky_relu_slope = leaky_relu_slope })
    end

    function GAT:forward(input_tensor, adj_mat)
        local x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x)
        x = self.gat2(x, adj_mat)
        -- return F.log_softmax(x, dim=1)
        return F.log_softmax(x, { dim = 2 })
    end

    it("GraphAttentionLayer: masked attention, heads concatenated or averaged (PyTorch's values)", function()
        local layer = GraphAttentionLayer(3, 4, 2, { concat = true, dropout = 0.4 })
        local mean_layer = GraphAttentionLayer(3, 2, 2)
        assert.are.same({ 3, 4 }, layer.W.shape)
        assert.are.same({ 2, 4, 1 }, layer.a.shape)
        tide.no_grad(function()
            -- W = torch.linspace(-1, 1, 12).view(3, 4); a = torch.linspace(-0.5, 0.7, 8).view(2, 4, 1)
            for _, l in ipairs({ layer, mean_layer }) do
                l.W:copy_(tide.linspace(-1, 1, 12):view(3, 4))
                l.a:copy_(tide.linspace(-0.5, 0.7, 8):view(2, 4, 1))
            end
        end)
        layer:eval()
        mean_layer:eval()
        local h = tide.tensor({ { 1., 0., 2. }, { 0.5, -1., 0. }, { 0., 1., 1. }, { 2., 1., -1. } })
        local adj = tide.tensor({ { 1, 1, 0, 0 }, { 1, 1, 1, 0 }, { 0, 1, 1, 1 }, { 0, 0, 1, 1 } })
        -- PyTorch 1.13 on the same numbers (a row's masked scores get no weight)
        assert_close({ -0.159161776304245, 0.06778039038181305, 0.8564567565917969,
            1.337085247039795, -0.049209240823984146, 0.22099313139915466, 0.8106974363327026,
            1.2154091596603394, -1.0346369743347168, -0.8140340447425842, 0.5242536067962646,
            0.8352267742156982, -1.5706942081451416, -1.2070578336715698, 0.15345698595046997,
            0.5170933604240417 }, layer(h, adj), 1e-5)
        assert_close({ 0.34864747524261475, 0.7024328112602234, 0.3807440996170044,
            0.7182011604309082, -0.2551916837692261, 0.010596364736557007, -0.7086186408996582,
            -0.34498223662376404 }, mean_layer(h, adj), 1e-5)
    end)

    it("GAT: Adam(weight_decay), NLLLoss on index masks, a few epochs on a tiny graph", function()
        local args = { epochs = 20, lr = 0.02, l2 = 5e-4, dropout_p = 0.1, hidden_dim = 8,
            num_heads = 2, concat_heads = true, val_every = 4, seed = 13 }
        tide.manual_seed(args.seed)
        -- use_accel = not args.no_accel and torch.accelerator.is_available()
        local use_accel = tide.accelerator.is_available() and false
        local device
        if use_accel then
            device = tide.accelerator.current_accelerator()
        else
            device = tide.device("cpu")
        end
        local features, labels, adj_mat = tiny_graph(12, 6, 3)
        features, labels, adj_mat = features:to(device), labels:to(device), adj_mat:to(device)
        -- idx = torch.randperm(len(labels)).to(device)
        local idx = tide.randperm(#labels):to(device)
        -- idx_test, idx_val, idx_train = idx[:1200], idx[1200:1600], idx[1600:]
        local idx_test, idx_val, idx_train = idx[{ { 1, 3 } }], idx[{ { 4, 6 } }], idx[{ { 7, -1 } }]

        local gat_net = GAT({
            in_features = features.shape[2],
            n_hidden = args.hidden_dim,
            n_heads = args.num_heads,
            -- num_classes=labels.max().item() + 1  (1-based labels: the max is the count)
            num_classes = labels:max():item(),
            concat = args.concat_heads,
            dropout = args.dropout_p,
            leaky_relu_slope = 0.2,
        }):to(device)
        -- optimizer = Adam(gat_net.parameters(), lr=args.lr, weight_decay=args.l2)
        local optimizer = optim.Adam(gat_net:parameters(), { lr = args.lr, weight_decay = args.l2 })
        local criterion = nn.NLLLoss()

        local first, last
        for epoch = 0, args.epochs - 1 do
            local loss_train, acc_train, loss_val, acc_val = train_iter(epoch + 1, gat_net, optimizer,
                criterion, { features, adj_mat }, labels, idx_train, idx_val, test)
            assert_finite(loss_train)
            assert_finite(loss_val)
            assert.is_true(acc_train >= 0 and acc_train <= 1 and acc_val >= 0 and acc_val <= 1)
            first = first or loss_train
            last = loss_train
        end
        assert.is_true(last < first, ("loss %.4f -> %.4f"):format(first, last))
        local loss_test, acc_test = test(gat_net, criterion, { features, adj_mat }, labels, idx_test)
        assert_finite(loss_test)
        assert.is_true(acc_test >= 0 and acc_test <= 1)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. gcn/main.py (the sparse features and normalized adjacency load_cora returns, torch.spmm)
---------------------------------------------------------------------------------------------
describe("gcn/main.py", function()
    -- class GraphConv(nn.Module):
    local GraphConv = nn.Module:extend("GraphConv")
    -- def __init__(self, input_dim, output_dim, use_bias=False):
    function GraphConv:init(input_dim, output_dim, opts)
        local use_bias = opts and opts.use_bias or false
        -- self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        self.kernel = nn.Parameter(tide.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = nil
        if use_bias then
            self.bias = nn.Parameter(tide.Tensor(output_dim))
            nn.init.zeros_(self.bias)
        end
    end

    function GraphConv:forward(input_tensor, adj_mat)
        local support = tide.mm(input_tensor, self.kernel)
        -- output = torch.spmm(adj_mat, support)
        local output = tide.spmm(adj_mat, support)
        -- if self.bias is not None:
        if self.bias ~= nil then
            output = output + self.bias
        end
        return output
    end

    -- class GCN(nn.Module):
    local GCN = nn.Module:extend("GCN")
    -- def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
    function GCN:init(input_dim, hidden_dim, output_dim, use_bias, dropout_p)
        if use_bias == nil then use_bias = true end
        dropout_p = dropout_p or 0.1
        -- self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc1 = GraphConv(input_dim, hidden_dim, { use_bias = use_bias })
        self.gc2 = GraphConv(hidden_dim, output_dim, { use_bias = use_bias })
        self.dropout = nn.Dropout(dropout_p)
    end

    function GCN:forward(input_tensor, adj_mat)
        local x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x)
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        -- return F.log_softmax(x, dim=1)
        return F.log_softmax(x, { dim = 2 })
    end

    -- load_cora's renormalization trick on an adjacency with self-loops
    local function normalize(adj_mat)
        -- degree_mat = torch.sum(adj_mat, dim=1)
        local degree_mat = tide.sum(adj_mat, { dim = 2 })
        -- degree_mat = torch.sqrt(1 / degree_mat)
        degree_mat = tide.sqrt(1 / degree_mat)
        -- degree_mat[degree_mat == float('inf')] = 0
        degree_mat[degree_mat:eq(tide.inf)] = 0
        -- degree_mat = torch.diag(degree_mat).to_sparse()
        degree_mat = tide.diag(degree_mat):to_sparse()
        -- adj_mat = degree_mat @ adj_mat @ degree_mat
        -- (Lua has no @: mm, which takes a sparse operand on either side)
        adj_mat = tide.mm(tide.mm(degree_mat, adj_mat), degree_mat)
        return adj_mat
    end

    it("the renormalized adjacency D^-1/2 (A + I) D^-1/2 (PyTorch's values)", function()
        -- adj_mat = torch.eye(V) + adj_mat
        local adj_mat = tide.eye(4) + tide.tensor({ { 0, 1, 0, 0 }, { 1, 0, 1, 0 }, { 0, 1, 0, 1 },
            { 0, 0, 1, 0 } })
        assert_close({ 0.4999999701976776, 0.40824827551841736, 0.0, 0.0, 0.40824827551841736,
            0.3333333134651184, 0.3333333134651184, 0.0, 0.0, 0.3333333134651184,
            0.3333333134651184, 0.40824827551841736, 0.0, 0.0, 0.40824827551841736,
            0.4999999701976776 }, normalize(adj_mat), 1e-6)
        -- an isolated node without a self-loop: 1/0 = inf, zeroed as the script does
        local iso = normalize(tide.tensor({ { 1., 0. }, { 0., 0. } }))
        assert_close({ 1, 0, 0, 0 }, iso)
    end)

    it("GCN: GraphConv with and without bias, Adam(weight_decay), NLLLoss on index masks", function()
        local args = { epochs = 20, lr = 0.01, l2 = 5e-4, dropout_p = 0.5, hidden_dim = 16,
            include_bias = false, seed = 42 }
        tide.manual_seed(args.seed)
        local device = tide.device("cpu")
        local features, labels, adj_mat = tiny_graph(12, 6, 3)
        adj_mat = normalize(adj_mat)
        -- return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)
        features, adj_mat = features:to_sparse():to(device), adj_mat:to_sparse():to(device)
        -- idx = torch.randperm(len(labels)).to(device)
        local idx = tide.randperm(#labels):to(device)
        -- idx_test, idx_val, idx_train = idx[:1000], idx[1000:1500], idx[1500:]
        local idx_test, idx_val, idx_train = idx[{ { 1, 3 } }], idx[{ { 4, 6 } }], idx[{ { 7, -1 } }]
        -- gcn = GCN(features.shape[1], args.hidden_dim, labels.max().item() + 1,
        --           args.include_bias, args.dropout_p).to(device)
        local gcn = GCN(features.shape[2], args.hidden_dim, labels:max():item(), args.include_bias,
            args.dropout_p):to(device)
        assert.is_nil(gcn.gc1.bias)
        assert.are.equal(2, #gcn:parameters())
        local with_bias = GCN(features.shape[2], args.hidden_dim, 3)
        assert.are.equal(4, #with_bias:parameters())
        assert.are.same({ 16 }, with_bias.gc1.bias.shape)
        local optimizer = optim.Adam(gcn:parameters(), { lr = args.lr, weight_decay = args.l2 })
        local criterion = nn.NLLLoss()
        local first, last
        for epoch = 0, args.epochs - 1 do
            local loss_train = train_iter(epoch + 1, gcn, optimizer, criterion, { features, adj_mat },
                labels, idx_train, idx_val, test)
            assert_finite(loss_train)
            first = first or loss_train
            last = loss_train
        end
        assert.is_true(last < first, ("loss %.4f -> %.4f"):format(first, last))
        local loss_test, acc_test = test(gcn, criterion, { features, adj_mat }, labels, idx_test)
        assert_finite(loss_test)
        assert.is_true(acc_test >= 0 and acc_test <= 1)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. recipes: defining_a_neural_network.py, zeroing_out_gradients.py
---------------------------------------------------------------------------------------------
describe("recipes/defining_a_neural_network.py", function()
    it("Net: Conv2d(1, 32, 3, 1), Dropout2d, flatten(start_dim=1), log_softmax(dim=1)", function()
        tide.manual_seed(0)
        -- class Net(nn.Module):
        local Net = nn.Module:extend("Net")
        function Net:init()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout2d(0.25)
            self.dropout2 = nn.Dropout2d(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)
        end

        function Net:forward(x)
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            -- x = x.flatten(start_dim=1)  (0-based 1 is Lua's 2)
            x = x:flatten({ start_dim = 2 })
            x = self.fc1(x)
            x = F.relu(x)
            x = self.dropout2(x)
            x = self.fc2(x)
            -- output = F.log_softmax(x, dim=1)
            local output = F.log_softmax(x, { dim = 2 })
            return output
        end

        local my_nn = Net()
        -- print(my_nn)
        local printed = tostring(my_nn)
        assert.is_truthy(printed:find("conv1", 1, true))
        assert.is_truthy(printed:find("dropout2", 1, true))
        -- random_data = torch.rand((1, 1, 28, 28))
        local random_data = tide.rand({ 1, 1, 28, 28 })
        local result = my_nn(random_data)
        assert.are.same({ 1, 10 }, result.shape)
        -- log-probabilities: exp sums to 1
        assert.is_true(math.abs(result:exp():sum():item() - 1) < 1e-5)
    end)
end)

describe("recipes/zeroing_out_gradients.py", function()
    it("CIFAR10 Net, SGD(momentum), optimizer.zero_grad each batch == model.zero_grad", function()
        tide.manual_seed(0)
        -- transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
        -- trainset = torchvision.datasets.CIFAR10(...): 16 random 3x32x32 images, normalized
        local images = (tide.rand(16, 3, 32, 32) - 0.5) / 0.5
        local trainset = tide.utils.data.TensorDataset(images, tide.randint(1, 11, { 16 }))
        -- trainloader = torch.utils.data.DataLoader(trainset, batch_size=4, shuffle=True, num_workers=2)
        local trainloader = tide.utils.data.DataLoader(trainset, { batch_size = 4, shuffle = true,
            num_workers = 2 })

        local Net = nn.Module:extend("Net")
        function Net:init()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        end

        function Net:forward(x)
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            -- x = x.flatten(start_dim=1)
            x = x:flatten({ start_dim = 2 })
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x
        end

        local net = Net()
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
        local optimizer = optim.SGD(net:parameters(), { lr = 0.01, momentum = 0.9 })

        local epoch_losses = {}
        -- for epoch in range(2):
        for epoch = 0, 3 do
            local running_loss = 0.0
            -- for i, data in enumerate(trainloader, 0):
            local i = 0
            for inputs, labels in trainloader:iter() do
                optimizer:zero_grad()
                -- a zeroed optimizer leaves no gradient behind (set_to_none, PyTorch 2's default,
                -- or zeros as 1.13 does)
                for _, p in ipairs(net:parameters()) do
                    assert.is_true(p.grad == nil or p.grad:abs():sum():item() == 0)
                end
                local outputs = net(inputs)
                local loss = criterion(outputs, labels)
                loss:backward()
                optimizer:step()
                -- running_loss += loss.item()
                running_loss = running_loss + loss:item()
                i = i + 1
            end
            assert_finite(running_loss)
            epoch_losses[epoch + 1] = running_loss / i
        end
        assert.is_true(epoch_losses[4] < epoch_losses[1],
            ("loss %.4f -> %.4f"):format(epoch_losses[1], epoch_losses[4]))

        -- "You can also use model.zero_grad(). This is the same as using optimizer.zero_grad()
        -- as long as all your model parameters are in that optimizer."
        local x = tide.randn(2, 3, 32, 32)
        criterion(net(x), tide.tensor({ 1, 2 })):backward()
        net:zero_grad()
        for _, p in ipairs(net:parameters()) do
            assert.is_true(p.grad == nil or p.grad:abs():sum():item() == 0)
        end
        -- without zeroing, two backward passes accumulate: twice the gradient of one
        criterion(net(x), tide.tensor({ 1, 2 })):backward()
        local once = net.fc3.bias.grad:clone()
        criterion(net(x), tide.tensor({ 1, 2 })):backward()
        assert.is_true(tide.allclose(net.fc3.bias.grad, 2 * once))
    end)
end)

---------------------------------------------------------------------------------------------
-- 4. beginner_source/blitz/neural_networks_tutorial.py
---------------------------------------------------------------------------------------------
describe("blitz/neural_networks_tutorial.py", function()
    it("LeNet, net.zero_grad, out.backward(grad), MSELoss, grad_fn walk, manual SGD update", function()
        tide.manual_seed(0)
        local Net = nn.Module:extend("Net")
        function Net:init()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        end

        function Net:forward(x)
            -- x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv1(x)), { 2, 2 })
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            -- x = x.view(-1, self.num_flat_features(x))
            x = x:view(-1, self:num_flat_features(x))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x
        end

        function Net:num_flat_features(x)
            -- size = x.size()[1:]  # all dimensions except the batch dimension
            local size = x:size()[{ { 2, -1 } }]
            local num_features = 1
            -- for s in size:
            for _, s in ipairs(size) do
                num_features = num_features * s
            end
            return num_features
        end

        local net = Net()
        assert.is_truthy(tostring(net):find("fc3", 1, true))
        -- params = list(net.parameters()); print(len(params)); print(params[0].size())
        local params = net:parameters()
        assert.are.equal(10, #params)
        assert.are.same({ 6, 1, 5, 5 }, params[1]:size())

        local input = tide.randn(1, 1, 32, 32)
        local out = net(input)
        assert.are.same({ 1, 10 }, out.shape)
        net:zero_grad()
        -- out.backward(torch.randn(1, 10))
        out:backward(tide.randn(1, 10))
        assert.are.same({ 6 }, net.conv1.bias.grad.shape)

        local output = net(input)
        -- target = torch.arange(1, 11); target = target.view(1, -1)
        local target = tide.arange(1, 11)
        target = target:view(1, -1)
        local criterion = nn.MSELoss()
        local loss = criterion(output, target)
        assert_finite(loss:item())

        -- print(loss.grad_fn); print(loss.grad_fn.next_functions[0][0]); ...next_functions[0][0]
        -- (tide's next_functions is tide.autograd.next_functions(grad_fn): a function)
        local next_functions = tide.autograd.next_functions
        assert.is_truthy(tostring(loss.grad_fn):find("Backward", 1, true))
        local prev = next_functions(loss.grad_fn)[1][1]
        assert.is_truthy(tostring(prev):find("Backward", 1, true))
        assert.are.equal(0, next_functions(loss.grad_fn)[1][2])
        assert.is_truthy(tostring(next_functions(prev)[1][1]):find("Backward", 1, true))

        net:zero_grad()
        -- print(net.conv1.bias.grad) before backward: None (set_to_none) or zeros
        local before = net.conv1.bias.grad
        assert.is_true(before == nil or before:abs():sum():item() == 0)
        loss:backward()
        assert.is_true(net.conv1.bias.grad:abs():sum():item() > 0)

        -- learning_rate = 0.01
        -- for f in net.parameters():
        --     f.data.sub_(f.grad.data * learning_rate)
        local learning_rate = 0.01
        local w0 = net.fc3.bias:clone()
        for _, f in ipairs(net:parameters()) do
            f.data:sub_(f.grad.data * learning_rate)
        end
        assert.is_true(tide.allclose(net.fc3.bias, w0 - learning_rate * net.fc3.bias.grad))

        -- optimizer = optim.SGD(net.parameters(), lr=0.01)
        local optimizer = optim.SGD(net:parameters(), { lr = 0.01 })
        local losses = {}
        for _ = 1, 5 do
            optimizer:zero_grad()
            output = net(input)
            loss = criterion(output, target)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end
        assert.is_true(losses[5] < losses[1], ("loss %.4f -> %.4f"):format(losses[1], losses[5]))
    end)
end)

---------------------------------------------------------------------------------------------
-- the gaps these scripts met, fixed
---------------------------------------------------------------------------------------------
describe("gaps met porting these scripts", function()
    it("x.size()[1:] is x:size()[{{2, -1}}], a tide.Size; Size:numel()", function()
        local x = tide.zeros(2, 3, 4)
        local size = x:size()[{ { 2, -1 } }]
        assert.are.equal(tide.Size({ 3, 4 }), size)
        assert.are.equal("tide.Size({3, 4})", tostring(size))
        -- Python's slice ends: {2} runs to the end, {} is all, ends past the size clamp
        assert.are.same({ 3, 4 }, x.shape[{ { 2 } }])
        assert.are.same({ 2, 3, 4 }, x.shape[{ {} }])
        assert.are.same({ 3, 4 }, x.shape[{ { -2, 10 } }])
        assert.are.same({}, x.shape[{ { 5, 9 } }])
        -- torch.Size([2, 3, 4]).numel() == 24
        assert.are.equal(24, x:size():numel())
        assert.are.equal(4, x:size()[-1])
        local ok, err = pcall(function() return x:size()[{ { 1.5 } }] end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: Size: a slice is a range {start, stop} of integers", 1, true))
        ok, err = pcall(function() return x:size()[{ 1, 2 }] end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("x:size()[{{2, -1}}]", 1, true))
        assert.are.same({ 2, 3, 4 }, x.shape)
        -- x.shape[:-1] + (-1, 2): a Size and a list (or two Sizes) concatenate to a Size
        assert.are.equal(tide.Size({ 2, 3, -1, 2 }), x.shape[{ { 1, -2 } }] + { -1, 2 })
        assert.are.equal(tide.Size({ 5, 2, 3, 4 }), { 5 } + x.shape)
        assert.are.equal(tide.Size({ 2, 3, 4, 2, 3, 4 }), x.shape + x:size())
        for _, bad in ipairs({ 1, { 1.5 }, tide.ones(1), { a = 1 } }) do
            ok, err = pcall(function() return x.shape + bad end)
            assert.is_false(ok)
            assert.is_truthy(tostring(err):find("tide: Size + ", 1, true))
            assert.is_truthy(tostring(err):find("as Python's tuples: x.shape[{{1, -2}}] + {-1, 2}",
                1, true))
        end
        assert.are.same({ 2, 3, 4 }, x.shape)
    end)

    it("autograd.next_functions(grad_fn): {node, 0} per tensor input, AccumulateGrad for a leaf",
        function()
        local next_functions = tide.autograd.next_functions
        local w = tide.randn(3, { requires_grad = true })
        local c = tide.ones(3)
        local y = (w * c):relu()
        -- y.grad_fn.next_functions == ((MulBackward0, 0),)
        local nf = next_functions(y.grad_fn)
        assert.are.equal(1, #nf)
        assert.are.equal("MulBackward0", tostring(nf[1][1]))
        assert.are.equal(0, nf[1][2])
        -- MulBackward0.next_functions == ((AccumulateGrad, 0), (None, 0))
        local mul = next_functions(nf[1][1])
        assert.are.equal(2, #mul)
        assert.are.equal("AccumulateGrad", tostring(mul[1][1]))
        assert.are.equal(w, mul[1][1].variable)
        assert.is_nil(mul[2][1])
        -- a list op: one pair per tensor of the list
        local cat = next_functions(tide.cat({ w, c }).grad_fn)
        assert.are.equal(2, #cat)
        assert.are.equal("AccumulateGrad", tostring(cat[1][1]))
        assert.is_nil(cat[2][1])
        -- after a backward that kept the graph it is still there
        y:sum():backward({ retain_graph = true })
        assert.are.equal("MulBackward0", tostring(next_functions(y.grad_fn)[1][1]))
        assert.are.same({}, next_functions(mul[1][1])) -- AccumulateGrad: a leaf's end
        -- after one that freed it, tide has no edges left (PyTorch keeps them): it says so
        y:sum():backward()
        local ok, err = pcall(next_functions, y.grad_fn)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: autograd.next_functions: backward() freed " ..
            "the graph of ReluBackward0", 1, true))
        ok, err = pcall(next_functions, y)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: autograd.next_functions: expected a grad_fn " ..
            "(t.grad_fn), got a tensor; pass its grad_fn", 1, true))
    end)
end)
