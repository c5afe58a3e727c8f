-- summary.lua — busted output handler: busted's plain terminal report, then one last line
-- "N passed, N failed, N pending" that spec/support/run_all.sh sums over all suites.
-- (Debian's busted 2.1.1 json handler prints nothing once a spec is pending: busted #729.)
return function(options)
    local busted = require("busted")
    local handler = require("busted.outputHandlers.plainTerminal")(options)

    -- subscribed after plainTerminal's own suite-end report, so this line comes last
    busted.subscribe({ "suite", "end" }, function()
        io.write(string.format("%d passed, %d failed, %d pending\n", handler.successesCount,
            handler.failuresCount + handler.errorsCount, handler.pendingsCount))
        io.flush()
        return nil, true
    end)

    return handler
end
