module github.com/cloudmailin/cloudmailin-go

go 1.16
