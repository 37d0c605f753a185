package main

import (
	"fmt"

	"github.com/mnemofs/mnemofs/mcp"
)

// printMCPSessions prints, after 'mnemofs stats', the MCP sessions the
// process holding the store serves, a line a user.
func printMCPSessions(acts []mcp.Activity) {
	if len(acts) == 0 {
		return
	}
	fmt.Println("MCP sessions:")
	for _, a := range acts {
		who := a.User
		if who == "" {
			who = "(every user)"
		}
		fmt.Printf("  %-16s %3d sessions %8d calls (%d running, at most %d at once) %6d refused by limits\n",
			who, a.Sessions, a.Calls, a.InFlight, a.Peak, a.Refused)
	}
}
