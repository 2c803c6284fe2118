// protoc with the C++ generator only: protobuf 3.21.12's
// src/google/protobuf/compiler/main.cc less the generators of the other
// languages, so that building JAX's and XLA's C++ protos does not compile
// the Java, Kotlin, Python, PHP, Ruby, C# and Objective-C code generators.
// Generated code is the same as the full protoc's: the C++ generator is one
// and the same.
#include <google/protobuf/compiler/command_line_interface.h>
#include <google/protobuf/compiler/cpp/generator.h>

int main(int argc, char* argv[]) {
  google::protobuf::compiler::CommandLineInterface cli;
  cli.AllowPlugins("protoc-");
  google::protobuf::compiler::cpp::CppGenerator cpp_generator;
  cli.RegisterGenerator("--cpp_out", "--cpp_opt", &cpp_generator,
                        "Generate C++ header and source.");
  return cli.Run(argc, argv);
}
