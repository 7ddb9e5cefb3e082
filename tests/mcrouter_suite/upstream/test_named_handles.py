#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

# pyre-unsafe

from mcrouter.test.MCProcess import MockMemcached
from mcrouter.test.McrouterTestCase import McrouterTestCase


class TestLargeObj(McrouterTestCase):
    config_list = "./mcrouter/test/test_named_handles_list.json"
    config_obj = "./mcrouter/test/test_named_handles_obj.json"

    def setUp(self):
        self.mc1 = self.add_server(MockMemcached())
        self.mc2 = self.add_server(MockMemcached())

    def test_named_handles_list(self):
        mcrouter = self.add_mcrouter(self.config_list)
        # NullRoute returns NOT_STORED
        self.assertFalse(mcrouter.set("test", "value"))
        self.assertEqual(self.mc1.get("test"), "value")
        self.assertEqual(self.mc2.get("test"), "value")

    def test_named_handles_obj(self):
        mcrouter = self.add_mcrouter(self.config_obj)
        # NullRoute returns NOT_STORED
        self.assertFalse(mcrouter.set("test2", "value"))
        self.assertEqual(self.mc1.get("test2"), "value")
        self.assertEqual(self.mc2.get("test2"), "value")
