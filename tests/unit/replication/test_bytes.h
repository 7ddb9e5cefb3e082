// Hand-written packets for the replication tests: bytes({0x80, 0x11, ...}).
#pragma once

#include <initializer_list>
#include <string>

inline std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}
