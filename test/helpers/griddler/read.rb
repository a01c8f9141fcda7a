# A Rails-like receiver of the `multipart` target format: Rack's multipart parser (Debian's
# ruby-rack) reads the POST body from stdin (CONTENT_TYPE in the environment), as a Rails
# controller's params would, and thoughtbot's Griddler adapter for the hosted service
# (test/peers/griddler-cloudmailin, unchanged) normalises it. Prints what Griddler would
# hand the app, as JSON.
#
# The adapter runs inside Rails with the griddler gem; what it uses of them is stood in for
# below, and only that: params with symbol keys (Rails' indifferent access),
# Object#try and String#to_datetime (ActiveSupport), Griddler::EmailParser.parse_address.
require "date"
require "json"
require "rack"
require "stringio"

class Object
  def try(name, *args)
    respond_to?(name) ? public_send(name, *args) : nil
  end
end

class String
  def to_datetime
    DateTime.parse(self)
  end
end

module Griddler
  module EmailParser
    def self.parse_address(text)
      { email: text[/<([^>]+)>/, 1] || text.strip }
    end
  end
end

require_relative "../../peers/griddler-cloudmailin/lib/griddler/cloudmailin/adapter"

def symbolize(value)
  case value
  when Hash then value.each_with_object({}) { |(k, v), h| h[k.to_sym] = symbolize(v) }
  when Array then value.map { |v| symbolize(v) }
  else value
  end
end

body = $stdin.binmode.read
env = { "REQUEST_METHOD" => "POST", "CONTENT_TYPE" => ENV.fetch("CONTENT_TYPE"), "CONTENT_LENGTH" => body.bytesize.to_s, "rack.input" => StringIO.new(body) }
params = symbolize(Rack::Multipart.parse_multipart(env))
adapter = Griddler::Cloudmailin::Adapter.new(params)
email = adapter.normalize_params
out = {
  legacy: adapter.legacy?,
  to: email[:to],
  cc: email[:cc],
  from: email[:from],
  subject: email[:subject],
  date: email[:date]&.iso8601,
  text: email[:text],
  html: email[:html],
  attachments: email[:attachments].map { |a| { filename: a[:filename], type: a[:type], bytes: a[:tempfile].read.unpack1("H*") } },
}
# Only when the envelope recipient is in no To or Cc (a Bcc), as the adapter does.
out[:bcc] = email[:bcc] if email.key?(:bcc)
puts JSON.generate(out)
