-- ported_scripts26_spec.lua — pytorch/tutorials' TensorBoard tutorials (introyt/tensorboardyt_tutorial.py,
-- intermediate/tensorboard_tutorial.py: SummaryWriter, add_image of a make_grid, add_scalars,
-- add_graph, add_embedding, add_pr_curve), scaled_dot_product_attention_tutorial.py (SDPA with
-- attn_mask / is_causal / dropout_p, sdpa_kernel and sdp_kernel, CausalSelfAttention against
-- PyTorch numbers) and torch_compile_tutorial.py (torch.compile of a function and a module,
-- module.compile(), torch._dynamo.reset()), ported line for line on tiny random data. The Python
-- line stands above each Lua line that differs from it. Dims are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local pb = require("tide.utils.protobuf")
local event_file = require("tide.utils.event_file")

local function tmpdir()
    local d = os.tmpname()
    os.remove(d)
    assert(os.execute("mkdir -p '" .. d .. "'"))
    return d
end

-- the event files under dir (recursively)
local function event_files(dir)
    local p = io.popen("find '" .. dir .. "' -name 'events.out.tfevents.*' | sort")
    local out = {}
    for line in p:lines() do
        out[#out + 1] = line
    end
    p:close()
    return out
end

-- the first field numbered num of a decoded message
local function field(msg, num)
    for _, f in ipairs(pb.decode(msg)) do
        if f.num == num then
            return f.value
        end
    end
end

-- {tag = list of summary values (raw bytes)} and the graph_defs of the events of a file
local function read_events(path)
    local evs, err = event_file.read(path)
    assert(err == nil, err)
    local tags, graphs = {}, {}
    for _, ev in ipairs(evs) do
        local s = field(ev, 5)
        if s then
            local v = field(s, 1)
            local tag = field(v, 1)
            tags[tag] = tags[tag] or {}
            table.insert(tags[tag], v)
        end
        local g = field(ev, 4)
        if g then
            graphs[#graphs + 1] = g
        end
    end
    return tags, graphs
end

---------------------------------------------------------------------------------------------
-- 1. introyt/tensorboardyt_tutorial.py and intermediate/tensorboard_tutorial.py
---------------------------------------------------------------------------------------------
describe("tensorboardyt_tutorial.py / tensorboard_tutorial.py", function()
    it("SummaryWriter: make_grid image, add_scalars, add_graph, add_embedding, add_pr_curve", function()
        tide.manual_seed(0)
        local dir = tmpdir()
        -- classes = ('T-shirt/top', 'Trouser', ...)
        local classes = { "T-shirt/top", "Trouser", "Pullover", "Dress" }
        -- training_set = FashionMNIST(...): 16 random 1x28x28 images, labels in 1..4
        local images_all = tide.rand(16, 1, 28, 28)
        local labels_all = tide.randint(1, 5, { 16 })
        local training_set = tide.data.TensorDataset(images_all, labels_all)
        -- training_loader = DataLoader(training_set, batch_size=4, shuffle=True, num_workers=2)
        local training_loader = tide.data.DataLoader(training_set, { batch_size = 4, shuffle = true })
        local validation_loader = tide.data.DataLoader(training_set, { batch_size = 4 })

        -- dataiter = iter(training_loader); images, labels = next(dataiter)
        local images, labels = training_loader:iter()()
        -- img_grid = torchvision.utils.make_grid(images)
        local img_grid = tide.utils.make_grid(images)
        -- writer = SummaryWriter('runs/fashion_mnist_experiment_1')
        local writer = tide.utils.tensorboard.SummaryWriter(dir .. "/fashion_mnist_experiment_1")
        -- writer.add_image('Four Fashion-MNIST Images', img_grid)
        writer:add_image("Four Fashion-MNIST Images", img_grid)
        -- writer.flush()
        writer:flush()

        -- class Net(nn.Module): conv1 6x5x5, pool, conv2 16x5x5, fc1..fc3 (LeNet)
        local Net = nn.Module:extend("Net")
        function Net:init()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 4 * 4, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        end
        function Net:forward(x)
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x:view(-1, 16 * 4 * 4)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)
        end
        local net = Net()
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
        local optimizer = optim.SGD(net:parameters(), { lr = 0.01, momentum = 0.9 })

        local running, losses = 0.0, {}
        for epoch = 1, 3 do
            -- for i, data in enumerate(training_loader, 0):
            for inputs, lbls in training_loader:iter() do
                optimizer:zero_grad()
                local outputs = net(inputs)
                local loss = criterion(outputs, lbls)
                loss:backward()
                optimizer:step()
                running = running + loss:item()
            end
            -- net.train(False); running_vloss over validation_loader
            net:train(false)
            local running_vloss = 0.0
            for vinputs, vlabels in validation_loader:iter() do
                local voutputs = net(vinputs)
                running_vloss = running_vloss + criterion(voutputs, vlabels):item()
            end
            net:train(true)
            local avg_loss, avg_vloss = running / 4, running_vloss / 4
            losses[#losses + 1] = avg_loss
            assert_finite(avg_vloss, "validation loss")
            -- writer.add_scalars('Training vs. Validation Loss',
            --                    { 'Training' : avg_loss, 'Validation' : avg_vloss },
            --                    epoch * len(training_loader) + i)
            writer:add_scalars("Training vs. Validation Loss",
                { Training = avg_loss, Validation = avg_vloss }, epoch * 4)
            running = 0.0
        end
        assert.is_true(losses[3] < losses[1])

        -- writer.add_graph(net, images)
        writer:add_graph(net, images)
        writer:flush()

        -- def select_n_random(data, labels, n=100): perm = torch.randperm(len(data)); ...
        local function select_n_random(data, lbls, n)
            assert(data:size(1) == lbls:size(1))
            local perm = tide.randperm(data:size(1))
            -- return data[perm][:n], labels[perm][:n]
            return data[perm][{ { 1, n } }], lbls[perm][{ { 1, n } }]
        end
        local eimages, elabels = select_n_random(images_all, labels_all, 8)
        -- class_labels = [classes[lab] for lab in labels]
        local class_labels = {}
        for i, lab in ipairs(elabels:totable()) do
            class_labels[i] = classes[lab]
        end
        -- features = images.view(-1, 28 * 28)
        local features = eimages:view(-1, 28 * 28)
        -- writer.add_embedding(features, metadata=class_labels, label_img=images.unsqueeze(1))
        -- (the tutorial's images are N x 28 x 28; ours keep their channel dim)
        writer:add_embedding(features, { metadata = class_labels, label_img = eimages })

        -- class_probs = [F.softmax(el, dim=0) for el in output]; test_probs = torch.cat(...)
        local test_probs = tide.no_grad(function()
            return F.softmax(net(images_all), { dim = 2 })
        end)
        -- def add_pr_curve_tensorboard(class_index, test_probs, test_label, global_step=0):
        local function add_pr_curve_tensorboard(class_index, probs, test_label, global_step)
            global_step = global_step or 0
            -- tensorboard_truth = test_label == class_index
            local tensorboard_truth = test_label:eq(class_index)
            -- tensorboard_probs = test_probs[:, class_index]
            local tensorboard_probs = probs[{ {}, class_index }]
            -- writer.add_pr_curve(classes[class_index], tensorboard_truth, tensorboard_probs,
            --                     global_step=global_step)
            writer:add_pr_curve(classes[class_index], tensorboard_truth, tensorboard_probs,
                global_step)
        end
        for i = 1, #classes do
            add_pr_curve_tensorboard(i, test_probs, labels_all)
        end
        -- writer.close()
        writer:close()

        -- what was written: the image, both scalars' runs, the graph, the 4 pr curves
        local files = event_files(dir)
        assert.are.equal(3, #files)
        -- (sorted: the two add_scalars runs, then the writer's own file)
        assert.is_truthy(files[1]:find("Training vs. Validation Loss_Training/", 1, true))
        local tags, graphs = read_events(files[3])
        assert.is_truthy(tags["Four Fashion-MNIST Images"])
        for _, c in ipairs(classes) do
            assert.are.equal(1, #tags[c])
        end
        assert.are.equal(1, #graphs)
        -- the graph holds the ops and the parameters by name
        local names, ops = {}, {}
        for _, f in ipairs(pb.decode(graphs[1])) do
            if f.num == 1 then
                names[field(f.value, 1)] = true
                ops[field(f.value, 2)] = true
            end
        end
        assert.is_true(names["input/input.1"] and names["output/output.1"])
        assert.is_true(names["Net/fc1.weight"] and names["Net/conv1.bias"])
        assert.is_true(ops["prim::Parameter"] and ops["IO Node"])
        local vt = read_events(files[1])["Training vs. Validation Loss"]
        assert.are.equal(3, #vt)
        assert.is_truthy(io.open(dir .. "/fashion_mnist_experiment_1/projector_config.pbtxt"))
        os.execute("rm -rf '" .. dir .. "'")
    end)

    it("add_pr_curve writes PyTorch's record byte for byte; bad input raises", function()
        local dir = tmpdir()
        local writer = tide.utils.tensorboard.SummaryWriter(dir)
        local l = tide.tensor({ 1, 0, 1, 1, 0, 0, 1, 0 })
        local p = tide.tensor({ 0.9, 0.1, 0.8, 0.4, 0.35, 0.6, 0.7, 0.2 }, { dtype = "float64" })
        -- writer.add_pr_curve('pr', l, p, num_thresholds=5)
        writer:add_pr_curve("pr", l, p, nil, { num_thresholds = 5 })
        -- bad input: a clear tide: error
        assert.has_error(function() writer:add_pr_curve("pr", l, p * 2) end,
            "tide: add_pr_curve: predictions[1] = 1.8 is outside [0, 1]; pass probabilities " ..
            "(e.g. F.softmax(output, 2)[{{}, c}])")
        assert.has_error(function() writer:add_pr_curve("pr", l:narrow(1, 1, 3), p) end,
            "tide: add_pr_curve: labels has 3 values and predictions 8; pass one label per prediction")
        assert.has_error(function() writer:add_graph(nn.Linear(2, 2), "x") end,
            "tide: add_graph: input_to_model must be a tensor or a list of tensors, got string")
        writer:close()
        local tags = read_events(event_files(dir)[1])
        -- summary.pr_curve('pr', l.numpy(), p.numpy(), num_thresholds=5).SerializeToString()
        local want = "0aa0010a0270724286010801120812020806120208052a78000080400000804000004040" ..
            "000000400000000000008040000000400000803f0000000000000000000000000000004000004040" ..
            "000080400000804000000000000000000000803f00000040000080400000003fabaa2a3f0000403f" ..
            "0000803f000000000000803f0000803f0000403f0000003f000000004a110a0f0a0970725f637572" ..
            "76657312021005"
        local got = tags.pr[1]:gsub(".", function(c) return string.format("%02x", c:byte()) end)
        assert.are.equal(want:sub(7), got) -- the Value (PyTorch's Summary less its 3-byte key)
        os.execute("rm -rf '" .. dir .. "'")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. intermediate_source/scaled_dot_product_attention_tutorial.py
---------------------------------------------------------------------------------------------
-- a deterministic tensor both sides can make: sin(arange(n) * a + b), viewed to shape
local function det(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do
        n = n * s
    end
    return tide.sin(tide.arange(n):float() * (a or 0.37) + (b or 0)):view(shape)
end

describe("scaled_dot_product_attention_tutorial.py", function()
    it("F.scaled_dot_product_attention with attn_mask, is_causal, dropout_p; sdpa_kernel", function()
        -- query, key, value = torch.randn(2, 3, 8, device=device), ... (deterministic here)
        local query, key, value = det({ 2, 3, 8 }), det({ 2, 3, 8 }, 0.23, 1.0), det({ 2, 3, 8 }, 0.11, 2.0)
        -- F.scaled_dot_product_attention(query, key, value)
        local out = F.scaled_dot_product_attention(query, key, value)
        -- PyTorch 1.13 has no F.scaled_dot_product_attention: softmax(q k^T / sqrt(E)) v in the venv
        ported.assert_close_list({ -0.3521084189414978, -0.26472949981689453, -0.17415055632591248,
            -0.08146628737449646 }, out[2][3]:narrow(1, 1, 4):totable(), 1e-5, "sdpa")
        assert.is_true(ported.close(out:sum():item(), -0.2232116460800171, 1e-5))
        local mask = tide.tensor({ { true, false, true }, { true, true, false }, { false, true, true } })
        out = F.scaled_dot_product_attention(query, key, value, { attn_mask = mask })
        ported.assert_close_list({ 0.30587244033813477, 0.20236368477344513, 0.09640881419181824,
            -0.01071164757013321 }, out[1][2]:narrow(1, 1, 4):totable(), 1e-5, "attn_mask")
        out = F.scaled_dot_product_attention(query, key, value, { is_causal = true })
        ported.assert_close_list({ -0.9514240622520447, -0.9405134320259094, -0.91823410987854,
            -0.8848552107810974 }, out[2][2]:narrow(1, 1, 4):totable(), 1e-5, "is_causal")
        -- dropout_p: finite, same shape
        local d = F.scaled_dot_product_attention(query, key, value, { dropout_p = 0.5 })
        assert.are.same({ 2, 3, 8 }, d:size())
        assert_finite(d:sum():item(), "dropout_p")

        -- from torch.nn.attention import SDPBackend, sdpa_kernel
        local SDPBackend, sdpa_kernel = nn.attention.SDPBackend, nn.attention.sdpa_kernel
        -- with sdpa_kernel(SDPBackend.MATH): math_time = benchmark(F.scaled_dot_product_attention, q, k, v)
        local m = sdpa_kernel(SDPBackend.MATH, function()
            return F.scaled_dot_product_attention(query, key, value)
        end)
        -- with sdpa_kernel(SDPBackend.FLASH_ATTENTION): (tide runs its one, math, implementation)
        local fl = sdpa_kernel(SDPBackend.FLASH_ATTENTION, function()
            return F.scaled_dot_product_attention(query, key, value)
        end)
        sdpa_kernel({ SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH }, function() end)
        assert.is_true(tide.equal(m, fl))
        assert.has_error(function() sdpa_kernel("MATH", function() end) end,
            "tide: sdpa_kernel: backends[1] = MATH is not an SDPBackend; use " ..
            "nn.attention.SDPBackend.MATH (or FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION)")
        -- PyTorch 2.0's form: with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, ...)
        local cuda = tide.backends.cuda
        local r = cuda.sdp_kernel({ enable_flash = false, enable_math = true, enable_mem_efficient = false },
            function()
                assert.is_false(cuda.flash_sdp_enabled())
                return F.scaled_dot_product_attention(query, key, value)
            end)
        assert.is_true(cuda.flash_sdp_enabled() and cuda.math_sdp_enabled())
        assert.is_true(tide.equal(m, r))
        assert.has_error(function() cuda.sdp_kernel({ enable_flashy = true }, function() end) end,
            "tide: backends.cuda.sdp_kernel: unknown option enable_flashy; expected enable_flash, " ..
            "enable_math or enable_mem_efficient")
    end)

    it("CausalSelfAttention: forward against PyTorch, eval and training modes", function()
        -- class CausalSelfAttention(nn.Module):
        local CausalSelfAttention = nn.Module:extend("CausalSelfAttention")
        -- def __init__(self, num_heads, embed_dimension, bias=False, is_causal=False, dropout=0.0):
        function CausalSelfAttention:init(num_heads, embed_dimension, bias, is_causal, dropout)
            -- assert embed_dimension % num_heads == 0
            assert(embed_dimension % num_heads == 0)
            -- self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
            self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, { bias = bias })
            self.c_proj = nn.Linear(embed_dimension, embed_dimension, { bias = bias })
            self.dropout = dropout
            self.resid_dropout = nn.Dropout(dropout)
            self.num_heads = num_heads
            self.embed_dimension = embed_dimension
            self.is_causal = is_causal
        end
        function CausalSelfAttention:forward(x)
            local query_projected = self.c_attn(x)
            -- batch_size = query_projected.size(0)
            local batch_size = query_projected:size(1)
            -- embed_dim = query_projected.size(2)
            local embed_dim = query_projected:size(3)
            -- head_dim = embed_dim // (self.num_heads * 3)
            local head_dim = math.floor(embed_dim / (self.num_heads * 3))
            -- query, key, value = query_projected.chunk(3, -1)
            local query, key, value = (table.unpack or unpack)(query_projected:chunk(3, -1))
            -- query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
            query = query:view(batch_size, -1, self.num_heads, head_dim):transpose(2, 3)
            key = key:view(batch_size, -1, self.num_heads, head_dim):transpose(2, 3)
            value = value:view(batch_size, -1, self.num_heads, head_dim):transpose(2, 3)
            local dropout, is_causal
            if self.training then
                dropout = self.dropout
                is_causal = self.is_causal
            else
                dropout = 0.0
                is_causal = false
            end
            -- y = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout, is_causal=is_causal)
            local y = F.scaled_dot_product_attention(query, key, value,
                { attn_mask = nil, dropout_p = dropout, is_causal = is_causal })
            -- y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)
            -- (the transpose makes y non-contiguous: the tutorial's .view works on CUDA, where the
            -- fused kernels lay the output out [B, L, H, E]; on the math path PyTorch's view and
            -- tide's both raise "use reshape", so reshape here)
            y = y:transpose(2, 3):reshape(batch_size, -1, self.num_heads * head_dim)
            y = self.resid_dropout(self.c_proj(y))
            return y
        end

        -- model = CausalSelfAttention(num_heads=num_heads, embed_dimension=embed_dimension,
        --     bias=False, is_causal=True, dropout=0.1).to("cuda").to(dtype).eval()
        local model = CausalSelfAttention(2, 8, false, true, 0.1):eval()
        tide.no_grad(function()
            model.c_attn.weight:copy_(det({ 24, 8 }, 0.19, 0.5) * 0.5)
            model.c_proj.weight:copy_(det({ 8, 8 }, 0.31, 0.2) * 0.5)
        end)
        local x = det({ 2, 5, 8 }, 0.13, 0.3)
        local want_row = { 0.23932252824306488, -1.0383481979370117, 1.3992211818695068,
            -1.1696642637252808, 0.44654369354248047, 0.4650060534477234, -1.1803346872329712,
            1.3976006507873535 }
        local y = model(x)
        ported.assert_close_list(want_row, y[2][5]:totable(), 1e-5, "eval")
        assert.is_true(ported.close(y:sum():item(), -1.8059473037719727, 1e-5))
        -- training with dropout 0: the causal path
        model.dropout = 0.0
        model.resid_dropout.p = 0.0
        model:train()
        y = model(x)
        assert.is_true(ported.close(y:sum():item(), -2.01357364654541, 1e-5))
        -- compiled_model = torch.compile(model); compiled_model(x)
        local compiled_model = tide.compile(model)
        assert.is_true(tide.equal(compiled_model(x), y))
        -- a few training steps on random targets
        model.dropout = 0.1
        model.resid_dropout.p = 0.1
        local opt = optim.Adam(model:parameters(), { lr = 1e-2 })
        local target = tide.randn(2, 5, 8)
        local losses = {}
        for i = 1, 5 do
            opt:zero_grad()
            local loss = F.mse_loss(model(x), target)
            loss:backward()
            opt:step()
            losses[i] = loss:item()
        end
        assert_finite(losses[5], "loss")
        assert.is_true(losses[5] < losses[1])
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. intermediate_source/torch_compile_tutorial.py (written from the tutorial as remembered)
---------------------------------------------------------------------------------------------
describe("torch_compile_tutorial.py", function()
    it("torch.compile of a function, a decorator, a module; mod.compile(); _dynamo.reset()", function()
        -- def foo(x, y): a = torch.sin(x); b = torch.cos(y); return a + b
        local function foo(x, y)
            local a = tide.sin(x)
            local b = tide.cos(y)
            return a + b
        end
        -- opt_foo1 = torch.compile(foo)
        local opt_foo1 = tide.compile(foo)
        local t1, t2 = tide.randn(10, 10), tide.randn(10, 10)
        -- print(opt_foo1(torch.randn(10, 10), torch.randn(10, 10)))
        assert.is_true(tide.equal(opt_foo1(t1, t2), foo(t1, t2)))
        -- @torch.compile def opt_foo2(x, y): ...
        local opt_foo2 = tide.compile(function(x, y)
            return tide.sin(x) + tide.cos(y)
        end)
        assert.is_true(tide.allclose(opt_foo2(t1, t2), foo(t1, t2)))
        -- def inner(x): return torch.sin(x)
        local function inner(x)
            return tide.sin(x)
        end
        -- @torch.compile def outer(x, y): a = inner(x); b = torch.cos(y); return a + b
        local outer = tide.compile(function(x, y)
            local a = inner(x)
            local b = tide.cos(y)
            return a + b
        end)
        assert.is_true(tide.allclose(outer(t1, t2), foo(t1, t2)))

        -- class MyModule(torch.nn.Module): lin = Linear(3, 3); forward: relu(lin(x))
        local MyModule = nn.Module:extend("MyModule")
        function MyModule:init()
            self.lin = nn.Linear(3, 3)
        end
        function MyModule:forward(x)
            return nn.functional.relu(self.lin(x))
        end
        local mod = MyModule()
        -- mod.compile()
        assert.is_nil(mod:compile())
        local t = tide.randn(10, 3)
        -- print(mod(t))
        local y = mod(t)
        -- opt_mod = torch.compile(mod)
        local opt_mod = tide.compile(mod)
        assert.is_true(tide.equal(opt_mod(t), y))
        -- torch.compile(model, mode="reduce-overhead")
        assert.are.equal(mod, tide.compile(mod, { mode = "reduce-overhead" }))
        assert.has_error(function() mod:compile({ mode = "fast" }) end)
        -- def f1(x, y): if x.sum() < 0: return -y; return y  (data-dependent control flow)
        local function f1(x, y)
            if x:sum():item() < 0 then
                return -y
            end
            return y
        end
        local compile_f1 = tide.compile(f1)
        local inp1, inp2 = tide.randn(5, 5), tide.randn(5, 5)
        assert.is_true(tide.equal(compile_f1(inp1, inp2), f1(inp1, inp2)))
        -- torch._dynamo.reset()
        tide._dynamo.reset()
        assert.has_error(function() tide._dynamo.reset(1) end,
            "tide: _dynamo.reset: takes no argument (torch._dynamo.reset())")
    end)
end)
