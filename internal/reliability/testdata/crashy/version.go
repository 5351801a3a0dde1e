package main

// Version is rewritten by the suite for each commit of the test skill.
const Version = "dev"
