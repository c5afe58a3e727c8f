-- exports_check.lua — what a shared library of tide exports against what the public headers
-- declare, both ways (run_all.sh, suite "exports"):
--
--   lua5.4 spec/support/exports_check.lua LIB.so...
--
-- The headers' functions are read from include/*.h with comments removed by the preprocessor
-- (static inline helpers are not exported and are left out); the library's from
-- `nm -D --defined-only`. Every function a header declares must be exported, and nothing else
-- may be: an exported internal name (cpu_alloc, tl_error) is interposed by a host that defines
-- the same name. Ends with "N passed, N failed".

local HEADERS = { "include/tide.h", "include/tide_io.h", "include/tide_dlpack.h",
    "include/tide_lua.h" }

local function lines_of(cmd)
    local p = assert(io.popen(cmd))
    local s = p:read("a")
    local ok = p:close()
    assert(ok, "command failed: " .. cmd)
    return s
end

-- the function names a header declares (after comment removal, without #include expansion)
local function declared(path)
    local src = lines_of("gcc -fpreprocessed -dD -E -P " .. path)
    src = src:gsub('extern "C" {', ""):gsub("#ifdef __cplusplus%s*}%s*#endif", "")
    src = src:gsub("#[^\n]*", "") -- directives: macros are not symbols
    local inline = {}
    for name in src:gmatch("static%s+inline[^;{(]-([%w_]+)%s*%(") do
        inline[name] = true
    end
    -- inline bodies may call other functions: drop them before looking for declarations
    src = src:gsub("(%b()%s*)(%b{})", "%1;")
    local names = {}
    for name in src:gmatch("([%a_][%w_]*)%s*%(") do
        if (name:match("^tide_") or name:match("^luaopen_")) and not inline[name] then
            names[name] = true
        end
    end
    return names
end

local want = {}
for _, h in ipairs(HEADERS) do
    for name in pairs(declared(h)) do
        want[name] = h
    end
end

local passed, failed = 0, 0
for _, lib in ipairs(arg) do
    local have = {}
    for line in lines_of("nm -D --defined-only " .. lib):gmatch("[^\n]+") do
        local kind, name = line:match("^%x*%s+(%a)%s+([^%s@]+)")
        if kind and name ~= "_init" and name ~= "_fini" then
            have[name] = kind
        end
    end
    local missing, extra = {}, {}
    for name, h in pairs(want) do
        if not have[name] then
            missing[#missing + 1] = name .. " (" .. h .. ")"
        end
    end
    for name in pairs(have) do
        if not want[name] then
            extra[#extra + 1] = name
        end
    end
    table.sort(missing)
    table.sort(extra)
    local n = 0
    for _ in pairs(have) do
        n = n + 1
    end
    if #missing == 0 then
        passed = passed + 1
        print(("ok   %s exports every function of the headers"):format(lib))
    else
        failed = failed + 1
        print(("FAIL %s does not export %d declared function(s): %s"):format(lib, #missing,
            table.concat(missing, ", ")))
    end
    if #extra == 0 then
        passed = passed + 1
        print(("ok   %s exports nothing else (%d symbols)"):format(lib, n))
    else
        failed = failed + 1
        print(("FAIL %s exports %d symbol(s) no header declares: %s"):format(lib, #extra,
            table.concat(extra, ", ")))
    end
end
print(("%d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and #arg > 0)
