// Package intent reads the demo's intent file: a JSON document listing the
// links the user wants, with their MTU, addresses, default gateway, static
// routes and DNS servers.
//
//	{
//	  "links": [
//	    {
//	      "name": "eth0",
//	      "mtu": 1500,
//	      "addresses": ["10.0.0.2/24"],
//	      "gateway": "10.0.0.1",
//	      "routes": [{"destination": "192.168.60.0/24", "gateway": "10.0.0.254", "metric": 100}],
//	      "dns": ["10.0.0.53"]
//	    }
//	  ]
//	}
//
// [Parse] validates the whole document before returning anything: it
// returns either a complete [Intent] or an [*Error] listing every problem
// found, each with the file, the line and column, the field path (such as
// "links[1].routes[0].gateway") and what is wrong. Nothing is partially
// accepted. [*Error] belongs to the invalid-input error class of package
// state (state.IsInvalidError reports true for it).
package intent
