package main

import "fmt"

func main() {
	total := 3
	fmt.Println(total
}
