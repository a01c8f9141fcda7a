// A consumer of Postroom written with the hosted service's official Go client
// (test/peers/cloudmailin-go), the way its README uses it. Two commands:
//
//	serve: an HTTP target on 127.0.0.1 (port printed as the first line) that reads every POST
//	       with cloudmailin.ParseIncoming(req.Body) and prints what it parsed as one JSON line;
//	       200 when it parsed, 400 with the client's error otherwise.
//	send FILE...: cloudmailin.NewClient() (CLOUDMAILIN_SMTP_URL, CLOUDMAILIN_API_BASE_URL),
//	       one attachment per FILE by cloudmailin.AttachmentFromFile, SendMail from $MAIL_FROM
//	       to $MAIL_TO; prints {"id": ...} or {"error": ...}. A FILE written "untyped:PATH" is
//	       sent with an empty content_type, as older versions of AttachmentFromFile did.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/cloudmailin/cloudmailin-go"
)

type parsedAttachment struct {
	FileName     string `json:"file_name"`
	ContentType  string `json:"content_type"`
	Size         uint64 `json:"size"`
	ContentID    string `json:"content_id"`
	Disposition  string `json:"disposition"`
	ContentBytes int    `json:"content_bytes"`
	Content      string `json:"content"`
}

type parsed struct {
	Path        string             `json:"path"`
	Error       string             `json:"error,omitempty"`
	Subject     string             `json:"subject"`
	From        string             `json:"from"`
	EnvelopeTo  string             `json:"envelope_to"`
	TLS         bool               `json:"tls"`
	TLSCipher   string             `json:"tls_cipher"`
	Plain       string             `json:"plain"`
	Attachments []parsedAttachment `json:"attachments"`
}

func printJSON(v interface{}) {
	line, _ := json.Marshal(v)
	fmt.Println(string(line))
}

func serve() {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %d\n", listener.Addr().(*net.TCPAddr).Port)
	handler := func(w http.ResponseWriter, req *http.Request) {
		message, err := cloudmailin.ParseIncoming(req.Body)
		if err != nil {
			printJSON(parsed{Path: req.URL.Path, Error: err.Error()})
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := parsed{
			Path:       req.URL.Path,
			Subject:    message.Headers.Subject(),
			From:       message.Headers.From(),
			EnvelopeTo: message.Envelope.To,
			TLS:        message.Envelope.TLS,
			TLSCipher:  message.Envelope.TLSCipher,
			Plain:      message.Plain,
		}
		out.Attachments = []parsedAttachment{}
		for _, a := range message.Attachments {
			content, _ := base64.StdEncoding.DecodeString(a.Content)
			out.Attachments = append(out.Attachments, parsedAttachment{a.FileName, a.ContentType, a.Size, a.ContentID, a.Disposition, len(content), a.Content})
		}
		printJSON(out)
		fmt.Fprintln(w, "ok")
	}
	if err := http.Serve(listener, http.HandlerFunc(handler)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func send(files []string) {
	client, err := cloudmailin.NewClient()
	if err != nil {
		printJSON(map[string]string{"error": err.Error()})
		return
	}
	message := cloudmailin.OutboundMail{
		From:    os.Getenv("MAIL_FROM"),
		To:      []string{os.Getenv("MAIL_TO")},
		Subject: "from the Go client",
		Plain:   "see the attachments",
	}
	for _, file := range files {
		untyped := strings.HasPrefix(file, "untyped:")
		attachment, err := cloudmailin.AttachmentFromFile(strings.TrimPrefix(file, "untyped:"))
		if err != nil {
			printJSON(map[string]string{"error": err.Error()})
			return
		}
		if untyped {
			attachment.ContentType = ""
		}
		message.Attachments = append(message.Attachments, attachment)
	}
	if _, err := client.SendMail(&message); err != nil {
		printJSON(map[string]string{"error": err.Error()})
		return
	}
	printJSON(map[string]string{"id": message.ID})
}

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "serve" {
		serve()
	} else if len(os.Args) >= 2 && os.Args[1] == "send" {
		send(os.Args[2:])
	} else {
		fmt.Fprintln(os.Stderr, "usage: consumer serve | consumer send FILE...")
		os.Exit(2)
	}
}
