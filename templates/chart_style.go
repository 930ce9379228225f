package templates

import "github.com/xuri/excelize/v2"

// ChartAxisFont is the font of every chart's axis labels: a normal dark
// grey (excelize's default is a near-invisible #D9D9D9).
var ChartAxisFont = excelize.Font{Color: "404040"}
