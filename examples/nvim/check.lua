-- examples/nvim/check.lua — tide inside Neovim (LuaJIT): requires tide and runs a forward pass of a small
-- network, then quits with status 0, or 1 and the error. `make test` runs it as
--   nvim --headless -u NONE -c "luafile examples/nvim/check.lua"
-- with LUA_PATH / LUA_CPATH naming the checkout's lua/ and build-luajit/lua/.
local ok, err = pcall(function()
    local tide = require("tide")
    tide.manual_seed(1)
    local net = tide.nn.Sequential(tide.nn.Linear(4, 8), tide.nn.ReLU(), tide.nn.Linear(8, 2))
    local y = net(tide.ones(3, 4))
    assert(y.shape[1] == 3 and y.shape[2] == 2, "unexpected shape")
    local s = y:sum():item()
    assert(s == s, "NaN output")
    io.stdout:write(string.format("tide in Neovim %s (%s): forward pass [3, 4] -> [%d, %d], sum %.4f\n",
        tostring(vim.version and vim.version().minor and ("0." .. vim.version().minor) or "?"),
        jit and jit.version or _VERSION, y.shape[1], y.shape[2], s))
end)
if not ok then
    io.stderr:write("nvim_check: " .. tostring(err) .. "\n")
    vim.cmd("cquit 1")
end
vim.cmd("qall!")
